// An edit or delete of a logged message, as editMessage and deleteMessage make it. The log is not part
// of the endpoint's row, so the message is read first and the decision is taken only on the row
// version it was read at (domain/messageEdits.ts): when another write of the endpoint came between
// (a message, a delivery, another edit), the message is read again. Each attempt authenticates anew.
import type { Request, Response } from 'express';
import type { Forbidden } from '../../domain/botRights.ts';
import { queryIssue } from '../../domain/issues.ts';
import type { LoggedCopy, VersionedRow } from '../../domain/messageEdits.ts';
import type { MessageRef } from '../../domain/messageIds.ts';
import type { Platform } from '../../domain/record.ts';
import type { Decision } from '../../domain/row.ts';
import type { EndpointStore } from '../../store/port.ts';
import { type Actor, actingPlatform, authenticate, type Credentials } from '../auth/authenticate.ts';
import { HttpProblem, forbidden, unauthorized } from '../problem.ts';
import { namedMessage } from './loggedMessage.ts';

/** Reads of the message per request at most, when every one is overtaken by another write of the endpoint. */
const ATTEMPTS = 10;
const BUSY_RETRY_AFTER_SECONDS = 1;

type Outcome = { kind: string } | Forbidden | { kind: 'stale' } | { kind: 'gone' };

export type MessageDecision<R extends Outcome> = (
  acting: Platform | undefined,
  current: VersionedRow | undefined,
  readAt: number,
  logged: LoggedCopy,
) => Decision<R>;

/** The decision's result (never stale, gone or forbidden: those are answered here), and who asked. */
export async function changeMessage<R extends Outcome>(
  req: Request,
  res: Response,
  deps: Credentials & { store: EndpointStore },
  endpointId: string,
  ref: MessageRef,
  decide: MessageDecision<R>,
  /** Checks of the request's own values: run once the caller is known, before the message is looked up (401, then 400, then 404). */
  judge: () => void = () => {},
): Promise<{ result: Exclude<R, { kind: 'stale' | 'gone' | 'forbidden' }>; actor: Actor; number: number }> {
  const { store } = deps;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const row = await store.endpoints.get(endpointId);
    const actor = authenticate(req, row, deps);
    if (!actor || !row) throw unauthorized();
    if (attempt === 0) judge();
    const logged = await namedMessage(store, endpointId, ref);
    const result = await store.endpoints.update<R | { kind: 'gone' }>(endpointId, (current) => {
      const now = authenticate(req, current, deps);
      if (!now || !current) return { result: { kind: 'gone' } };
      return decide(actingPlatform(now), current, row.version, logged);
    });
    if (result.kind === 'stale') continue;
    if (result.kind === 'gone') throw unauthorized();
    if (result.kind === 'forbidden') {
      // The parameter that named the message is the one refused: the message is another platform's.
      const parameter = 'number' in ref ? 'number' : 'platform';
      throw forbidden((result as Forbidden).detail, [
        queryIssue(parameter, 'names a message another platform sent: only its platform may change it'),
      ]);
    }
    return { result: result as Exclude<R, { kind: 'stale' | 'gone' | 'forbidden' }>, actor, number: logged.number };
  }
  res.setHeader('Retry-After', String(BUSY_RETRY_AFTER_SECONDS));
  throw new HttpProblem(
    503,
    `The endpoint changed ${ATTEMPTS} times while this change of its message was being made; nothing was applied. Retry shortly.`,
  );
}
