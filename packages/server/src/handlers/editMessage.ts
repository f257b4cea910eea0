import { webhookEditBody } from '../delivery/payload.ts';
import { decideEdit, editParamsIssues } from '../domain/messageEdits.ts';
import { messageRefOf } from '../domain/messageIds.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, queryOf } from '../http/operations.ts';
import { invalid, refinedProblem } from '../http/problem.ts';
import { currentItem, namedMessage } from '../http/record/loggedMessage.ts';
import { changeMessage } from '../http/record/messageChange.ts';
import { respond } from '../http/respond.ts';

export const editMessage =
  (deps: AppDeps): Handler =>
  async (req, res) => {
    const { store, clock, messageTtlMs, onDeliveriesQueued } = deps;
    const id = pathParam(req, 'endpoint');
    const { number, platform, message_id, message_content, message_attachments, message_embed } = queryOf(req, 'editMessage');
    const named = messageRefOf({ number, platform, message_id });
    if (!named.ok) throw invalid(named.issues);
    const fields = { message_content, message_attachments, message_embed };
    const judge = () => {
      const wrong = editParamsIssues(fields);
      if (wrong.length > 0) throw invalid(wrong);
    };
    const context = { now: clock(), messageTtlMs, webhookEditBody };
    const { result, number: edited } = await changeMessage(
      req,
      res,
      deps,
      id,
      named.ref,
      (acting, current, readAt, logged) => decideEdit(acting, current, readAt, logged, fields, context),
      judge,
    );
    if (result.kind === 'invalid') throw invalid(result.issues);
    if (result.kind === 'deleted')
      throw refinedProblem('message-deleted', `Message ${edited} was deleted; it cannot be edited. Nothing was applied.`);
    if (result.kind === 'edit limit') {
      throw refinedProblem(
        'edit-limit',
        `Message ${edited} has been edited ${result.limit} times, the most it may be. Nothing was applied.`,
      );
    }
    onDeliveriesQueued();
    respond(res, 'editMessage').json(200, await currentItem(store, id, await namedMessage(store, id, { number: edited })));
  };
