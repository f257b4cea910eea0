import type { AppDeps } from '../http/deps.ts';
import { type Handler, replyJsonText } from '../http/operations.ts';
import { readEndpoint } from '../http/readAhead.ts';
import { unauthorized } from '../http/problem.ts';
import { presentedTokenDigest } from '../http/presentedToken.ts';
import { digestsMatch } from '../tokens.ts';

export const getEndpoint =
  ({ store, validateResponses }: AppDeps): Handler =>
  async (req, res) => {
    const found = await readEndpoint(req, store);
    if (!found || !digestsMatch(found.tokenHash, presentedTokenDigest(req))) throw unauthorized();
    replyJsonText(res, 'getEndpoint', 200, found.recordJson, () => found.record, validateResponses);
  };
