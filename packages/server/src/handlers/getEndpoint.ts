import { platformRefusal } from '../domain/actingPlatform.ts';
import { actingPlatform, authenticate } from '../http/auth/authenticate.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, queryOf } from '../http/operations.ts';
import { forbidden, unauthorized } from '../http/problem.ts';
import { seenBy } from '../http/record/botView.ts';
import { shownRecord } from '../http/record/recordView.ts';
import { readEndpoint } from '../http/request/readAhead.ts';
import { respond } from '../http/respond.ts';

export const getEndpoint = ({ store, bots, adminTokenHash, validateResponses }: AppDeps): Handler => {
  // A read answered in the caller's turn would send the turn's responses one by one between the
  // others' work: they end together instead (http/transport/endAtTurnEnd.ts). A read across the
  // network answers a turn's batch in one callback, already back to back, where deferring only adds work.
  const endAtTurnEnd = store.inProcess;
  return async (req, res) => {
    const found = await readEndpoint(req, store);
    const actor = authenticate(req, found, { bots, adminTokenHash });
    if (!actor || !found) throw unauthorized();
    const { platform: named } = queryOf(req, 'getEndpoint');
    const acting = actingPlatform(actor);
    const refusal = platformRefusal(acting, named, 'platform');
    if (refusal) throw forbidden(refusal);
    // The message the reader is shown (its platform's oldest unread), then what its credential may see of it.
    const view = await shownRecord(store, pathParam(req, 'endpoint'), found, named ?? acting);
    respond(res, 'getEndpoint').jsonText(200, seenBy(actor, view), { messageNumber: view.number, validateResponses, endAtTurnEnd });
  };
};
