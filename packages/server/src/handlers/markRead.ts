import { markRead as markPlatformRead, type Row } from '../domain/lifecycle.ts';
import type { Platform } from '../domain/record.ts';
import type { AppDeps } from '../http/deps.ts';
import { setMessageNumber } from '../http/messageNumber.ts';
import { type Handler, pathParam, reply } from '../http/operations.ts';
import { HttpProblem, unauthorized } from '../http/problem.ts';
import type { Decision } from '../store/port.ts';
import { presentsTokenOf } from '../http/presentedToken.ts';

type Result = { kind: 'ok'; row: Row } | { kind: 'unauthorized' } | { kind: 'not pending'; pending: number | undefined };

export const markRead =
  ({ store }: AppDeps): Handler =>
  async (req, res) => {
    const { platform, message_number: named } = req.query as unknown as { platform: Platform; message_number?: number };
    const result = await store.update(pathParam(req, 'endpoint'), (current): Decision<Result> => {
      if (!presentsTokenOf(req, current)) return { result: { kind: 'unauthorized' } };
      // A late acknowledgement of a message that a newer one replaced must not mark the newer one.
      const pending = current.state.pendingSince === null ? undefined : current.state.seq;
      if (named !== undefined && named !== pending) return { result: { kind: 'not pending', pending } };
      const next = markPlatformRead(current, platform);
      return next === current ? { result: { kind: 'ok', row: current } } : { write: next, result: { kind: 'ok', row: next } };
    });
    if (result.kind === 'unauthorized') throw unauthorized();
    if (result.kind === 'not pending') {
      const now = result.pending === undefined ? 'no message is' : `message ${result.pending} is`;
      throw new HttpProblem(409, `Message ${named} is no longer pending (${now}); nothing was marked.`);
    }
    setMessageNumber(res, result.row.state);
    reply(res, 'markRead', 200, result.row.record);
  };
