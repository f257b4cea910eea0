import { markRead as markPlatformRead } from '../domain/lifecycle.ts';
import type { EndpointRecord, Platform } from '../domain/record.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, reply } from '../http/operations.ts';
import { unauthorized } from '../http/problem.ts';
import type { Decision } from '../store/port.ts';
import { presentedTokenDigest } from '../http/presentedToken.ts';
import { digestsMatch } from '../tokens.ts';

export const markRead =
  ({ store }: AppDeps): Handler =>
  async (req, res) => {
    const { platform } = req.query as { platform: Platform };
    const presented = presentedTokenDigest(req);
    const record = await store.update(pathParam(req, 'endpoint'), (current): Decision<EndpointRecord | undefined> => {
      if (!current || !digestsMatch(current.tokenHash, presented)) return { result: undefined };
      const next = markPlatformRead(current, platform);
      return next === current ? { result: current.record } : { write: next, result: next.record };
    });
    if (!record) throw unauthorized();
    reply(res, 'markRead', 200, record);
  };
