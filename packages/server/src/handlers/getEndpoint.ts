import type { AppDeps } from '../http/deps.ts';
import { type Handler, replyJsonText } from '../http/operations.ts';
import { setMessageNumber } from '../http/messageNumber.ts';
import { readEndpoint } from '../http/readAhead.ts';
import { unauthorized } from '../http/problem.ts';
import { authenticate } from '../http/authenticate.ts';
import { viewFor } from '../http/botView.ts';

export const getEndpoint = ({ store, bots, adminTokenHash, validateResponses }: AppDeps): Handler => {
  // A read answered in the caller's turn would send the turn's responses one by one between the
  // others' work: they end together instead (http/endAtTurnEnd.ts). A read across the network answers
  // a turn's batch in one callback, already back to back, where deferring only adds work.
  const end = store.readsInTurn ? 'at turn end' : 'now';
  return async (req, res) => {
    const found = await readEndpoint(req, store);
    const actor = authenticate(req, found, { bots, adminTokenHash });
    if (!actor || !found) throw unauthorized();
    setMessageNumber(res, found.state);
    if (actor.kind === 'bot') {
      const view = viewFor(actor, found.record, found.recordJson);
      if (view.hid) return replyJsonText(res, 'getEndpoint', 200, view.json, () => view.record, validateResponses, end);
    }
    replyJsonText(res, 'getEndpoint', 200, found.recordJson, () => found.record, validateResponses, end, found.recordJsonBytes);
  };
};
