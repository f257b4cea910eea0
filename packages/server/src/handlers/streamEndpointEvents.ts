import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, queryOf } from '../http/operations.ts';
import { HttpProblem, unauthorized } from '../http/problem.ts';
import { resumePoint } from '../events/endpointEvents.ts';
import { openEndpointStream } from '../events/endpointStream.ts';
import { authenticate } from '../http/auth/authenticate.ts';

/** When an endpoint has all the streams it may: a client that reconnects in a loop waits this long. */
const STREAM_RETRY_AFTER_SECONDS = 10;

/**
 * What a bot key's per-endpoint streams count under: its own budget, never the endpoint's slots. A
 * colon keeps it apart from endpoint IDs (which never hold one).
 */
export const botStreamsKey = (bot: string) => `bot:${bot}`;

/** A text/event-stream of the record's committed changes; the format is in the spec and events/endpointEvents.ts. */
export const streamEndpointEvents =
  ({ store, bots, adminTokenHash, events, logger }: AppDeps): Handler =>
  async (req, res) => {
    const { last_event_id } = queryOf(req, 'streamEndpointEvents');
    const endpointId = pathParam(req, 'endpoint');
    const credentials = { bots, adminTokenHash };
    // The same 401 as getEndpoint, before anything of the stream is sent.
    const found = await store.endpoints.get(endpointId);
    const actor = authenticate(req, found, credentials);
    if (!actor) throw unauthorized();
    const bot = actor.kind === 'bot' ? actor : undefined;
    const budgetKey = bot ? botStreamsKey(bot.bot) : endpointId;
    const limit = bot ? events.settings.maxPerBotKey : events.settings.maxPerEndpoint;
    if (events.full(budgetKey, limit)) {
      res.setHeader('Retry-After', String(STREAM_RETRY_AFTER_SECONDS));
      throw new HttpProblem(
        429,
        bot
          ? `This bot key has ${limit} event streams open on this server; close one or retry later.`
          : `This endpoint has ${limit} event streams open on this server; close one or retry later.`,
      );
    }
    openEndpointStream({
      store,
      streams: events,
      endpointId,
      // Checked again at every look: a rotated token, a rotated or deleted key (once this instance
      // has read the bots again), or a key whose platform no longer takes part ends the stream.
      stillAuthorized: async (row) => {
        if (bot) await bots.fresh();
        return authenticate(req, row, credentials) !== undefined;
      },
      bot: bot?.bot,
      platform: bot?.platform,
      budgetKey,
      resume: resumePoint(req.headers['last-event-id'], last_event_id),
      req,
      res,
      logger,
    });
  };
