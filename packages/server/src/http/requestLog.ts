// One JSON log line per request (pino), and a request id taken from X-Request-Id or generated and
// echoed back. Lighter than a child logger per request: the profile showed that cost on every
// request even with logging off, so the child is made only when a handler asks for `req.log`.
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { type Logger, redactUrl } from '../logger.ts';

declare module 'http' {
  interface IncomingMessage {
    id?: string;
    /** This request's logger (bound to its id), created on first use. */
    log?: Logger;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', { configurable: true, get: () => (child ??= logger.child({ reqId: id })) });
    const started = performance.now();
    // 'close' also fires when a client drops a long-lived response (an event stream).
    res.on('close', () => {
      const level = res.statusCode >= 500 ? 'error' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      // Only what an operator needs: never headers (Authorization) nor the raw URL (token).
      logger[level](
        {
          req: { id, method: req.method, url: redactUrl(req.originalUrl) },
          res: { statusCode: res.statusCode },
          responseTime: Math.round(performance.now() - started),
        },
        'request completed',
      );
    });
    next();
  };
}
