// Listening and closing the HTTP side of the service.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './http/app.ts';
import { answerClientError } from './http/clientError.ts';
import { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS, limitConnections } from './http/connectionLimits.ts';
import { displayUrl } from './http/displayUrl.ts';
import { drainConnections } from './http/drainConnections.ts';
import type { AppDeps } from './http/deps.ts';
import { invalid, problemFor } from './http/problem.ts';
import { JSON_API_HEADERS, securityHeaderList } from './http/securityHeaders.ts';

/** Request line plus headers; room for every update parameter at its maximum, fully encoded. */
export const MAX_REQUEST_HEAD_BYTES = 128 * 1024;

/**
 * The request target as Express expects it: an absolute-form target (`GET http://host/path`, which
 * HTTP/1.1 servers must accept) becomes its path and query; undefined when it cannot be parsed.
 */
export function originForm(target: string): string | undefined {
  if (target.startsWith('/')) return target;
  if (!/^https?:\/\//i.test(target)) return target === '*' ? target : undefined;
  try {
    const url = new URL(target);
    return url.pathname + url.search;
  } catch {
    return undefined;
  }
}

/** The security headers every answer carries, for the one answered before the app sees the request. */
const SECURITY_HEADERS = securityHeaderList(JSON_API_HEADERS.helmet, JSON_API_HEADERS.extra);

/** Answers a problem document before the app sees the request, with the headers every answer carries. */
function answerEarly(res: ServerResponse, status: 400 | 417, body: object): void {
  const text = JSON.stringify(body);
  for (const [name, value] of SECURITY_HEADERS) res.setHeader(name, value);
  res.writeHead(status, { 'content-type': 'application/problem+json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Node answers an `Expect` other than `100-continue` with a bare 417 unless told how. */
function rejectExpectation(_req: IncomingMessage, res: ServerResponse): void {
  answerEarly(res, 417, problemFor(417, 'Only "Expect: 100-continue" is supported.'));
}

function rejectTarget(res: ServerResponse): void {
  const p = invalid([{ parameter: 'endpoint', in: 'path', message: 'the request target is not a valid URL' }]);
  answerEarly(res, 400, problemFor(400, p.message, undefined, p.errors));
}

export interface HttpListener {
  url: string;
  port: number;
  /** Stops accepting connections and resolves when in-flight requests have finished. */
  close(): Promise<void>;
}

/** The server could not listen (port in use, address not on this machine, host not resolvable): HOST and PORT are at fault. */
export class ListenError extends Error {
  constructor(host: string, port: number, cause: Error) {
    super(`cannot listen on ${host}:${port} (check HOST and PORT): ${cause.message}`, { cause });
  }
}

export async function listen(deps: AppDeps, port: number, host: string, connections: ConnectionLimits = DEFAULT_CONNECTION_LIMITS): Promise<HttpListener> {
  // Every update parameter travels in the query string: 1500 code points percent-encoded can take
  // 18 KB, more than Node's default 16 KB header limit, so the limit is raised.
  const app = createApp(deps);
  // Slow clients: the head must arrive within 10 s and the whole request within 30 s; Node enforces
  // both on a timer, checked every second (its default, 30 s, would make the 10 s limit meaningless).
  const limits = { maxHeaderSize: MAX_REQUEST_HEAD_BYTES, headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1_000 };
  const server: Server = createServer(limits, (req: IncomingMessage, res: ServerResponse) => {
    drain.track(req, res);
    const target = originForm(req.url ?? '');
    if (target === undefined) return rejectTarget(res);
    req.url = target;
    app(req, res);
  });
  server.on('clientError', answerClientError(MAX_REQUEST_HEAD_BYTES));
  server.on('checkExpectation', rejectExpectation);
  limitConnections(server, connections);
  const drain = drainConnections(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new ListenError(host, port, err)));
    server.listen(port, host, () => resolve());
  });
  server.keepAliveTimeout = 65_000; // longer than common load-balancer idle timeouts
  const actual = (server.address() as AddressInfo).port;
  return {
    url: displayUrl(host, actual),
    port: actual,
    close: () =>
      new Promise<void>((resolve) => {
        drain.begin();
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
