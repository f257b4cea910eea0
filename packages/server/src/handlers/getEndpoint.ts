import { platformRefusal } from '../domain/actingPlatform.ts';
import { actingPlatform, authenticate } from '../http/auth/authenticate.ts';
import { viewFor as redactedView } from '../http/record/botView.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, queryOf, replyJsonText } from '../http/operations.ts';
import { forbidden, unauthorized } from '../http/problem.ts';
import { readEndpoint } from '../http/request/readAhead.ts';
import { setShownNumber, viewFor } from '../http/record/recordView.ts';

export const getEndpoint = ({ store, bots, adminTokenHash, validateResponses }: AppDeps): Handler => {
  // A read answered in the caller's turn would send the turn's responses one by one between the
  // others' work: they end together instead (http/transport/endAtTurnEnd.ts). A read across the network answers
  // a turn's batch in one callback, already back to back, where deferring only adds work.
  const end = store.readsInTurn ? 'at turn end' : 'now';
  return async (req, res) => {
    const found = await readEndpoint(req, store);
    const actor = authenticate(req, found, { bots, adminTokenHash });
    if (!actor || !found) throw unauthorized();
    const { platform: named } = queryOf(req, 'getEndpoint');
    const acting = actingPlatform(actor);
    const refusal = platformRefusal(acting, named, 'platform');
    if (refusal) throw forbidden(refusal);
    // The message the reader is shown (its platform's oldest unread), then what its credential may see of it.
    const view = await viewFor(store, pathParam(req, 'endpoint'), found, named ?? acting);
    setShownNumber(res, view);
    if (actor.kind === 'bot') {
      const seen = redactedView(actor, view.record(), view.json);
      if (seen.hid) return replyJsonText(res, 'getEndpoint', 200, seen.json, () => seen.record, validateResponses, end);
    }
    replyJsonText(res, 'getEndpoint', 200, view.json, view.record, validateResponses, end, view.bytes);
  };
};
