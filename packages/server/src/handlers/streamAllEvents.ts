import type { Request } from 'express';
import type { Platform } from '../domain/record.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, queryOf } from '../http/operations.ts';
import { authenticateBot, presentsAdminToken } from '../http/auth/authenticate.ts';
import { HttpProblem, KEY_OR_ADMIN_UNAUTHORIZED_DETAIL } from '../http/problem.ts';
import { openAllChangesStream, resumeAtPosition } from '../events/allChangesStream.ts';

/** When a credential has all the streams it may: a client that reconnects in a loop waits this long. */
const STREAM_RETRY_AFTER_SECONDS = 10;

/** Who opened a stream of all changes, for the per-credential limit, and whether they still may. */
export interface AllEventsAccess {
  /** The key its streams count under (EventStreams.track); a colon keeps it apart from endpoint IDs. */
  key: string;
  stillAllowed: () => Promise<boolean>;
  /** The bot whose key opened it: rotating or deleting that key ends the stream. */
  bot?: string;
  /** That key's platform: the stream shows only endpoints where it takes part (botChanges.ts). */
  platform?: Platform;
}

/**
 * The one decision of who may open the stream of all changes: a bot key of any platform, or the
 * operator's admin token (both `Authorization: Bearer`). Undefined: refused (401).
 */
export function allEventsAccess(req: Request, { adminTokenHash, bots }: AppDeps): AllEventsAccess | undefined {
  const bot = authenticateBot(req, bots);
  if (bot) {
    return {
      key: `all:bot:${bot.bot}`,
      bot: bot.bot,
      platform: bot.platform,
      // Re-checked at heartbeats: a key rotated or deleted on another instance ends the stream too.
      stillAllowed: async () => {
        await bots.fresh();
        return authenticateBot(req, bots)?.bot === bot.bot;
      },
    };
  }
  if (!presentsAdminToken(req, adminTokenHash)) return undefined;
  return { key: 'all:admin', stillAllowed: async () => true }; // the admin token changes only with a restart
}

/** A text/event-stream of every committed change of every endpoint; the format is in the spec and changeReader.ts. */
export const streamAllEvents =
  (deps: AppDeps): Handler =>
  async (req, res) => {
    const access = allEventsAccess(req, deps);
    if (!access) throw new HttpProblem(401, KEY_OR_ADMIN_UNAUTHORIZED_DETAIL);
    const { events, store, logger } = deps;
    if (events.full(access.key)) {
      res.setHeader('Retry-After', String(STREAM_RETRY_AFTER_SECONDS));
      throw new HttpProblem(
        429,
        `This credential has ${events.settings.maxPerEndpoint} streams of all changes open on this server; close one or retry later.`,
      );
    }
    const { last_event_id } = queryOf(req, 'streamAllEvents');
    openAllChangesStream({
      store,
      streams: events,
      budgetKey: access.key,
      bot: access.bot,
      platform: access.platform,
      stillAllowed: access.stillAllowed,
      resume: resumeAtPosition(req.headers['last-event-id'], last_event_id),
      req,
      res,
      logger,
    });
  };
