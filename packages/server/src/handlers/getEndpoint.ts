import type { AppDeps } from '../http/deps.ts';
import { type Handler, replyJsonText } from '../http/operations.ts';
import { setMessageNumber } from '../http/messageNumber.ts';
import { readEndpoint, readsCrossNetwork } from '../http/readAhead.ts';
import { unauthorized } from '../http/problem.ts';
import { presentsTokenOf } from '../http/presentedToken.ts';

export const getEndpoint = ({ store, validateResponses }: AppDeps): Handler => {
  // On SQLite a GET is answered in the callback that read its request, so the responses of a turn
  // would go out one by one between the others' work: they end together (http/endAtTurnEnd.ts). On
  // PostgreSQL the turn's batched read answers them all in one callback, already back to back, and
  // deferring them cost 6% (paired).
  const end = readsCrossNetwork(store) ? 'now' : 'at turn end';
  return async (req, res) => {
    const found = await readEndpoint(req, store);
    if (!presentsTokenOf(req, found)) throw unauthorized();
    setMessageNumber(res, found.state);
    replyJsonText(res, 'getEndpoint', 200, found.recordJson, () => found.record, validateResponses, end, found.recordJsonBytes);
  };
};
