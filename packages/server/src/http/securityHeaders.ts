// Security headers decided by helmet. They do not depend on the request, so helmet runs once at
// start-up against a recording response and every request gets the result in one setHeaders call
// (helmet's thirteen chained middlewares cost about a tenth of a GET in the benchmark).
import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

/** The headers helmet sets with these options, in the order it sets them. */
function helmetHeaders(options: HelmetOptions): Map<string, OutgoingHttpHeader> {
  const headers = new Map<string, OutgoingHttpHeader>();
  const recorder = {
    setHeader: (name: string, value: OutgoingHttpHeader) => headers.set(name.toLowerCase(), value),
    removeHeader: (name: string) => headers.delete(name.toLowerCase()),
  };
  let done = false;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, () => (done = true));
  if (!done) throw new Error('helmet did not finish synchronously; its headers cannot be precomputed');
  return headers;
}

export function securityHeaders(options: HelmetOptions): RequestHandler {
  const headers = helmetHeaders(options);
  return (_req, res, next) => {
    res.setHeaders(headers);
    next();
  };
}
