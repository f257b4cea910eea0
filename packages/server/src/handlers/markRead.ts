import { platformRefusal, platformToMark } from '../domain/actingPlatform.ts';
import { decideMarkRead, type MarkReadResult } from '../domain/lifecycle.ts';
import { type Actor, actingPlatform, authenticate, presentsBotKey } from '../http/authenticate.ts';
import { recordFor } from '../http/botView.ts';
import type { AppDeps } from '../http/deps.ts';
import { setMessageNumber } from '../http/messageNumber.ts';
import { type Handler, pathParam, queryOf, reply } from '../http/operations.ts';
import { HttpProblem, forbidden, invalid, unauthorized } from '../http/problem.ts';

type Refused = { kind: 'unauthorized' } | { kind: 'forbidden'; detail: string };

export const markRead =
  ({ store, bots, adminTokenHash }: AppDeps): Handler =>
  async (req, res) => {
    const { platform: named, message_number: number } = queryOf(req, 'markRead');
    // A token's holder acts for no platform in particular, so it must name one (a bot key's is its own;
    // the admin token, also a bearer, is told to name one once it is known to be that).
    if (named === undefined && !presentsBotKey(req)) {
      throw invalid([
        {
          parameter: 'platform',
          in: 'query',
          message: 'is required when authenticating with the token (a bot key marks its own platform)',
        },
      ]);
    }
    let actor: Actor | undefined;
    const result = await store.update<MarkReadResult | Refused | { kind: 'no platform' }>(pathParam(req, 'endpoint'), (current) => {
      actor = authenticate(req, current, { bots, adminTokenHash });
      if (!actor || !current) return { result: { kind: 'unauthorized' } };
      const acting = actingPlatform(actor);
      const refusal = platformRefusal(acting, named, 'platform');
      if (refusal) return { result: { kind: 'forbidden', detail: refusal } };
      const platform = platformToMark(acting, named);
      if (platform === undefined) return { result: { kind: 'no platform' } };
      return decideMarkRead(current, platform, number);
    });
    if (result.kind === 'unauthorized' || !actor) throw unauthorized();
    if (result.kind === 'no platform') {
      throw invalid([{ parameter: 'platform', in: 'query', message: 'is required when authenticating with the admin token' }]);
    }
    if (result.kind === 'forbidden') throw forbidden(result.detail);
    if (result.kind === 'not pending') {
      const now = result.pending === undefined ? 'no message is' : `message ${result.pending} is`;
      throw new HttpProblem(409, `Message ${number} is no longer pending (${now}); nothing was marked.`);
    }
    setMessageNumber(res, result.row.state);
    reply(res, 'markRead', 200, recordFor(actor, result.row.record));
  };
