import { decideDelete } from '../domain/messageEdits.ts';
import { messageRefOf } from '../domain/messageIds.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, queryOf } from '../http/operations.ts';
import { invalid } from '../http/problem.ts';
import { currentItem, namedMessage } from '../http/record/loggedMessage.ts';
import { changeMessage } from '../http/record/messageChange.ts';
import { respond } from '../http/respond.ts';

export const deleteMessage =
  (deps: AppDeps): Handler =>
  async (req, res) => {
    const { store, clock, messageTtlMs, onDeliveriesQueued } = deps;
    const id = pathParam(req, 'endpoint');
    const named = messageRefOf(queryOf(req, 'deleteMessage'));
    if (!named.ok) throw invalid(named.issues);
    const context = { now: clock(), messageTtlMs };
    const { result, number } = await changeMessage(req, res, deps, id, named.ref, (acting, current, readAt, logged) =>
      decideDelete(acting, current, readAt, logged, context),
    );
    if (result.changed) onDeliveriesQueued();
    respond(res, 'deleteMessage').json(200, await currentItem(store, id, await namedMessage(store, id, { number })));
  };
