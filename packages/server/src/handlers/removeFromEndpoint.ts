import { decideRemoval, type RemovalResult } from '../domain/removal.ts';
import { authenticate } from '../http/authenticate.ts';
import type { AppDeps } from '../http/deps.ts';
import { setMessageNumber } from '../http/messageNumber.ts';
import { type Handler, pathParam, queryOf, replyJsonText } from '../http/operations.ts';
import { invalid, unauthorized } from '../http/problem.ts';

export const removeFromEndpoint =
  ({ store, bots, validateResponses }: AppDeps): Handler =>
  async (req, res) => {
    const { token: _token, ...params } = queryOf(req, 'removeFromEndpoint');
    // Authentication, the removal rules and the outbox commit in one transaction.
    const result = await store.update<RemovalResult | { kind: 'unauthorized' }>(pathParam(req, 'endpoint'), (current) =>
      authenticate(req, current, bots) && current ? decideRemoval(current, params) : { result: { kind: 'unauthorized' } },
    );
    if (result.kind === 'unauthorized') throw unauthorized();
    if (result.kind === 'invalid') throw invalid(result.issues);
    setMessageNumber(res, result.state);
    replyJsonText(res, 'removeFromEndpoint', 200, result.json, () => result.record, validateResponses);
  };
