import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, replyJsonText } from '../http/operations.ts';
import { unauthorized } from '../http/problem.ts';
import { tokenMatchesDigest } from '../tokens.ts';

export const getEndpoint =
  ({ store, validateResponses }: AppDeps): Handler =>
  async (req, res) => {
    const found = await store.get(pathParam(req, 'endpoint'));
    if (!found || !tokenMatchesDigest(found.tokenHash, req.query.token as string)) throw unauthorized();
    replyJsonText(res, 'getEndpoint', 200, found.recordJson, () => found.record, validateResponses);
  };
