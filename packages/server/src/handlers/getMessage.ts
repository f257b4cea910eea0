import { messageRefOf } from '../domain/messageIds.ts';
import { authenticate } from '../http/auth/authenticate.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, queryOf } from '../http/operations.ts';
import { invalid, unauthorized } from '../http/problem.ts';
import { currentItem, namedMessage } from '../http/record/loggedMessage.ts';
import { respond } from '../http/respond.ts';

export const getMessage =
  ({ store, bots, adminTokenHash }: AppDeps): Handler =>
  async (req, res) => {
    const id = pathParam(req, 'endpoint');
    const found = await store.endpoints.get(id);
    if (!authenticate(req, found, { bots, adminTokenHash }) || !found) throw unauthorized();
    const named = messageRefOf(queryOf(req, 'getMessage'));
    if (!named.ok) throw invalid(named.issues);
    respond(res, 'getMessage').json(200, await currentItem(store, id, await namedMessage(store, id, named.ref)));
  };
