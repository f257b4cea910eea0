import { platformRefusal, platformToMark } from '../domain/actingPlatform.ts';
import { decideMarkRead, type MarkReadResult } from '../domain/lifecycle.ts';
import { authenticate, presentsBotKey } from '../http/authenticate.ts';
import type { AppDeps } from '../http/deps.ts';
import { setMessageNumber } from '../http/messageNumber.ts';
import { type Handler, pathParam, queryOf, reply } from '../http/operations.ts';
import { HttpProblem, forbidden, invalid, unauthorized } from '../http/problem.ts';

type Refused = { kind: 'unauthorized' } | { kind: 'forbidden'; detail: string };

export const markRead =
  ({ store, bots }: AppDeps): Handler =>
  async (req, res) => {
    const { platform: named, message_number: number } = queryOf(req, 'markRead');
    // A token's holder acts for no platform in particular, so it must name one (a bot key's is its own).
    if (named === undefined && !presentsBotKey(req)) {
      throw invalid([
        {
          parameter: 'platform',
          in: 'query',
          message: 'is required when authenticating with the token (a bot key marks its own platform)',
        },
      ]);
    }
    const result = await store.update<MarkReadResult | Refused>(pathParam(req, 'endpoint'), (current) => {
      const actor = authenticate(req, current, bots);
      if (!actor || !current) return { result: { kind: 'unauthorized' } };
      const acting = actor.kind === 'bot' ? actor.platform : undefined;
      const refusal = platformRefusal(acting, named, 'platform');
      if (refusal) return { result: { kind: 'forbidden', detail: refusal } };
      return decideMarkRead(current, platformToMark(acting, named)!, number);
    });
    if (result.kind === 'unauthorized') throw unauthorized();
    if (result.kind === 'forbidden') throw forbidden(result.detail);
    if (result.kind === 'not pending') {
      const now = result.pending === undefined ? 'no message is' : `message ${result.pending} is`;
      throw new HttpProblem(409, `Message ${number} is no longer pending (${now}); nothing was marked.`);
    }
    setMessageNumber(res, result.row.state);
    reply(res, 'markRead', 200, result.row.record);
  };
