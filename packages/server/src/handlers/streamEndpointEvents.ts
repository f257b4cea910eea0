import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, queryOf } from '../http/operations.ts';
import { HttpProblem, unauthorized } from '../http/problem.ts';
import { openEventStream, resumePoint } from '../events/session.ts';
import { authenticate } from '../http/authenticate.ts';

/** When an endpoint has all the streams it may: a client that reconnects in a loop waits this long. */
const STREAM_RETRY_AFTER_SECONDS = 10;

/** A text/event-stream of the record's committed changes; the format is in the spec and session.ts. */
export const streamEndpointEvents =
  ({ store, bots, events, logger }: AppDeps): Handler =>
  async (req, res) => {
    const { last_event_id } = queryOf(req, 'streamEndpointEvents');
    const endpointId = pathParam(req, 'endpoint');
    // The same 401 as getEndpoint, before anything of the stream is sent.
    const found = await store.get(endpointId);
    const actor = authenticate(req, found, bots);
    if (!actor) throw unauthorized();
    const byKey = actor.kind === 'bot';
    if (events.full(endpointId)) {
      res.setHeader('Retry-After', String(STREAM_RETRY_AFTER_SECONDS));
      throw new HttpProblem(
        429,
        `This endpoint has ${events.settings.maxPerEndpoint} event streams open on this server; close one or retry later.`,
      );
    }
    openEventStream({
      store,
      streams: events,
      endpointId,
      // Checked again at every look: a rotated token, or a rotated or deleted key (once this instance
      // has read the bots again), ends the stream.
      stillAuthorized: async (row) => {
        if (byKey) await bots.fresh();
        return authenticate(req, row, bots) !== undefined;
      },
      bot: byKey ? actor.bot : undefined,
      resume: resumePoint(req.headers['last-event-id'], last_event_id),
      req,
      res,
      logger,
    });
  };
