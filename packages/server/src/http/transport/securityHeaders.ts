// Security headers decided by helmet. They do not depend on the request, so helmet runs once at
// start-up against a recording response and every request gets the recorded list (helmet's thirteen
// chained middlewares cost about a tenth of a GET in the benchmark).
//
// The set is the one for a JSON API (OWASP's REST Security Cheat Sheet), not helmet's defaults for
// web pages: a response that is never rendered gains nothing from the seven headers that steer how a
// browser treats a document (referrer, DNS prefetch, opener, agent cluster, IE download, Flash
// policies, the retired XSS auditor), and each header is work on every response (the bisection put
// the twelve at 9-26 us of CPU per GET, a tenth of it). Cache-Control: no-store keeps records and
// problems (which a token URL fetched) out of shared and browser caches.
// Buys: the recorded list, 20k → 23k GETs per 4 s (BENCHMARKS.md, 6796692); the JSON API's set, GET
// −2.7% CPU (80f9c83).
import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

/** What every API response carries: nothing may load, frame, sniff or cache it; HTTPS only. */
export const JSON_API_HEADERS: { helmet: HelmetOptions; extra: Record<string, string> } = {
  helmet: {
    // Only these two directives: helmet's defaults add ten more, all looser than default-src 'none'.
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    xFrameOptions: { action: 'deny' },
    // Kept by default: Cross-Origin-Resource-Policy, Strict-Transport-Security, X-Content-Type-Options.
    crossOriginOpenerPolicy: false,
    originAgentCluster: false,
    referrerPolicy: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
  },
  extra: { 'cache-control': 'no-store' },
};

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

/** helmet's headers for `options`, then `extra`, as name and value pairs (lower-case names). */
export function securityHeaderList(options: HelmetOptions, extra: Record<string, string> = {}): [string, OutgoingHttpHeader][] {
  return [...helmetHeaders(options), ...Object.entries(extra)];
}

/** Headers as raw lines (`name: value` and CRLF), for answers written to the socket itself. */
export const headerLines = (headers: [string, OutgoingHttpHeader][]): string =>
  headers.map(([name, value]) => `${name}: ${String(value)}\r\n`).join('');

/** helmet's headers for `options`, then `extra` (which a handler may still override, as the event stream does). */
export function securityHeaders(options: HelmetOptions, extra: Record<string, string> = {}): RequestHandler {
  const headers = securityHeaderList(options, extra);
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}
