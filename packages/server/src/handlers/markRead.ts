import { decideMarkRead, type MarkReadResult } from '../domain/lifecycle.ts';
import type { AppDeps } from '../http/deps.ts';
import { setMessageNumber } from '../http/messageNumber.ts';
import { type Handler, pathParam, queryOf, reply } from '../http/operations.ts';
import { presentsTokenOf } from '../http/presentedToken.ts';
import { HttpProblem, unauthorized } from '../http/problem.ts';

export const markRead =
  ({ store }: AppDeps): Handler =>
  async (req, res) => {
    const { platform, message_number: named } = queryOf(req, 'markRead');
    const result = await store.update<MarkReadResult | { kind: 'unauthorized' }>(pathParam(req, 'endpoint'), (current) =>
      presentsTokenOf(req, current) ? decideMarkRead(current, platform, named) : { result: { kind: 'unauthorized' } },
    );
    if (result.kind === 'unauthorized') throw unauthorized();
    if (result.kind === 'not pending') {
      const now = result.pending === undefined ? 'no message is' : `message ${result.pending} is`;
      throw new HttpProblem(409, `Message ${named} is no longer pending (${now}); nothing was marked.`);
    }
    setMessageNumber(res, result.row.state);
    reply(res, 'markRead', 200, result.row.record);
  };
