// One JSON log line per request (pino), and a request id taken from X-Request-Id or generated and
// echoed back. A child logger per request costs every request even with logging off, so the child is
// made only when a handler asks for `req.log`. Buys: logging ~8% → ~1% of a GET (BENCHMARKS.md,
// bdb3b62), and +27% requests with `req.log` defined once on the request prototype (65829ba).
// Other observers of finished requests (the request metrics) hang on the same 'close' listener and
// clock reading instead of adding their own to every request.
import { randomUUID } from 'node:crypto';
import type { Express, Request, RequestHandler, Response } from 'express';
import type { Logger } from '../../logger.ts';
import { redactUrl } from './redactUrl.ts';
import { BOT_KEY_PREFIX, TOKEN_PREFIX, tokenMatchesDigest } from '../../tokens.ts';

declare module 'http' {
  interface IncomingMessage {
    id?: string;
    /** This request's logger (bound to its id), created on first use. */
    log?: Logger;
  }
}

/**
 * A client's id is kept only when it looks like an id: at most 64 characters of `A-Z a-z 0-9 . _ -`
 * (UUIDs, ULIDs, trace ids). Anything else, which may be a secret pasted into the wrong header, is
 * replaced by a generated id and neither logged nor echoed.
 */
const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
/**
 * Ids are logged and echoed, so one that may hold a credential is replaced too: one with the token
 * or key prefix anywhere, a run of 40 or more token characters (a token's random part is 67 or more;
 * UUIDs have runs of at most 36), or the admin token itself (which may look like an id).
 */
const mayHoldToken = (id: string) => id.includes(TOKEN_PREFIX) || id.includes(BOT_KEY_PREFIX) || /[A-Za-z0-9_-]{40}/.test(id);

/** nginx's "client closed request": the client left before any answer was sent. */
const CLIENT_CLOSED_REQUEST = 499;

/** Told of every request when its response has closed, with how long it took (ms). */
export type CompletionObserver = (req: Request, res: Response, elapsedMs: number) => void;

export function requestLog(
  app: Express,
  logger: Logger,
  observers: CompletionObserver[] = [],
  adminTokenHash?: Uint8Array,
): RequestHandler {
  // `req.log` is a getter on this app's request prototype, defined once: defining it on each request
  // object turned every request into a slow (dictionary-mode) object for all later middleware.
  const children = new WeakMap<Request, Logger>();
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: Request): Logger {
      let child = children.get(this);
      if (!child) children.set(this, (child = logger.child({ reqId: this.id })));
      return child;
    },
  });
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id =
      typeof given === 'string' &&
      REQUEST_ID.test(given) &&
      !mayHoldToken(given) &&
      !(adminTokenHash && tokenMatchesDigest(adminTokenHash, given))
        ? given
        : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    const started = performance.now();
    const method = req.method; // as sent: a HEAD is answered as a GET further down (http/request/headAsGet.ts)
    // 'close' also fires when a client drops a long-lived response (an event stream).
    res.on('close', () => {
      const elapsedMs = performance.now() - started;
      // Nothing was sent: logged and counted as 499, not as the 200 statusCode starts at.
      if (!res.headersSent) res.statusCode = CLIENT_CLOSED_REQUEST;
      for (const observe of observers) observe(req, res, elapsedMs);
      const level = res.statusCode >= 500 ? 'error' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      // Only what an operator needs: never headers (Authorization) nor the raw URL (token).
      logger[level](
        {
          req: { id, method, url: redactUrl(req.originalUrl) },
          res: { statusCode: res.statusCode },
          responseTime: Math.round(elapsedMs),
        },
        'request completed',
      );
    });
    next();
  };
}
