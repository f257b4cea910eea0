import { markRead as markPlatformRead } from '../domain/lifecycle.ts';
import type { EndpointRecord, Platform } from '../domain/record.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, reply } from '../http/operations.ts';
import { unauthorized } from '../http/problem.ts';
import type { Decision } from '../store/port.ts';
import { tokenMatchesDigest } from '../tokens.ts';

export const markRead =
  ({ store }: AppDeps): Handler =>
  async (req, res) => {
    const { token, platform } = req.query as { token: string; platform: Platform };
    const record = await store.update(pathParam(req, 'endpoint'), (current): Decision<EndpointRecord | undefined> => {
      if (!current || !tokenMatchesDigest(current.tokenHash, token)) return { result: undefined };
      const next = markPlatformRead(current, platform);
      return next === current ? { result: current.record } : { write: next, result: next.record };
    });
    if (!record) throw unauthorized();
    reply(res, 'markRead', 200, record);
  };
