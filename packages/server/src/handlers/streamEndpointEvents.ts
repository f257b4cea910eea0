import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam } from '../http/operations.ts';
import { unauthorized } from '../http/problem.ts';
import { openEventStream, resumePoint } from '../events/session.ts';
import { presentedTokenDigest } from '../http/presentedToken.ts';
import { digestsMatch } from '../tokens.ts';

/** A text/event-stream of the record's committed changes; the format is in the spec and session.ts. */
export const streamEndpointEvents =
  ({ store, events, logger }: AppDeps): Handler =>
  async (req, res) => {
    const { token, last_event_id } = req.query as unknown as { token: string; last_event_id?: number };
    const endpointId = pathParam(req, 'endpoint');
    // The same 401 as getEndpoint, before anything of the stream is sent.
    const found = await store.get(endpointId);
    if (!found || !digestsMatch(found.tokenHash, presentedTokenDigest(req))) throw unauthorized();
    openEventStream({
      store,
      streams: events,
      endpointId,
      token,
      resume: resumePoint(req.headers['last-event-id'], last_event_id),
      req,
      res,
      logger,
    });
  };
