// Listening and closing the HTTP side of the service.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { createApp } from './http/app.ts';
import { answerClientError } from './http/transport/clientError.ts';
import { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS, limitConnections } from './http/transport/connectionLimits.ts';
import { displayUrl } from './http/transport/displayUrl.ts';
import { drainConnections } from './http/transport/drainConnections.ts';
import type { AppDeps } from './http/deps.ts';
import { invalid, problemFor } from './http/problem.ts';
import { JSON_API_HEADERS, securityHeaderList } from './http/transport/securityHeaders.ts';

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
function answerEarly(res: ServerResponse, status: 400 | 404 | 417, body: object): void {
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

/**
 * HTTP/1.1 requires a Host header (RFC 9112 §3.2). Node's own check answers a bare 400 without a body
 * or the security headers, so it is turned off and made here.
 */
function rejectMissingHost(res: ServerResponse): void {
  const p = invalid([{ parameter: 'Host', in: 'header', message: 'is required in an HTTP/1.1 request' }]);
  res.setHeader('Connection', 'close');
  answerEarly(res, 400, problemFor(400, p.message, undefined, p.errors));
}

const needsHost = (req: IncomingMessage) => req.httpVersionMajor === 1 && req.httpVersionMinor >= 1 && req.headers.host === undefined;

/** A CONNECT request (a tunnel): Node leaves it unanswered unless told how. This is no proxy. */
function rejectConnect(_req: IncomingMessage, socket: Duplex): void {
  const body = JSON.stringify(problemFor(405, 'CONNECT is not supported: this server is not a proxy.'));
  socket.on('error', () => undefined);
  socket.end(
    'HTTP/1.1 405 Method Not Allowed\r\n' +
      'Allow: GET, HEAD, POST, OPTIONS\r\n' +
      'Content-Type: application/problem+json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      SECURITY_HEADER_LINES +
      'Connection: close\r\n\r\n' +
      body,
  );
}

const SECURITY_HEADER_LINES = SECURITY_HEADERS.map(([name, value]) => `${name}: ${String(value)}\r\n`).join('');

/** What the management listener serves: the probes and the metrics, nothing that takes a credential. */
const MANAGEMENT_PATHS = new Set(['/-/live', '/-/ready', '/-/metrics']);
/** Connections the management listener holds at once: probes and scrapes need a few. */
export const MANAGEMENT_MAX_CONNECTIONS = 100;

export interface HttpListener {
  url: string;
  port: number;
  /** The management listener's URL, when one was asked for. */
  managementUrl: string | undefined;
  /** Stops accepting connections and resolves when in-flight requests have finished. */
  close(): Promise<void>;
}

/** The server could not listen (port in use, address not on this machine, host not resolvable): HOST and PORT are at fault. */
export class ListenError extends Error {
  constructor(host: string, port: number, cause: Error, name = 'PORT') {
    super(`cannot listen on ${host}:${port} (check HOST and ${name}): ${cause.message}`, { cause });
  }
}

/** How long a client may take to send a request before it is answered 408 and disconnected. */
export interface SlowClientLimits {
  /** For the request line and headers. */
  headersTimeoutMs: number;
  /** For the whole request, body included. */
  requestTimeoutMs: number;
  /** How often Node looks for connections over either limit. */
  checkIntervalMs: number;
}

/**
 * The head must arrive within 10 s (the spec's `request-timeout` problem says so) and the whole
 * request within 30 s. Node checks both on a timer, every second here (its default, 30 s, would make
 * the 10 s limit meaningless).
 */
export const SLOW_CLIENT_LIMITS: SlowClientLimits = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, checkIntervalMs: 1_000 };

const serverLimits = (slowClients: SlowClientLimits) => ({
  // Every update parameter travels in the query string: 1500 code points percent-encoded can take
  // 18 KB, more than Node's default 16 KB header limit, so the limit is raised.
  maxHeaderSize: MAX_REQUEST_HEAD_BYTES,
  headersTimeout: slowClients.headersTimeoutMs,
  requestTimeout: slowClients.requestTimeoutMs,
  connectionsCheckingInterval: slowClients.checkIntervalMs,
  requireHostHeader: false, // answered by rejectMissingHost, with a problem document
});

interface Listening {
  server: Server;
  url: string;
  port: number;
  close(): Promise<void>;
}

/** An HTTP server in front of `app` that answers what Node rejects itself as problem documents, and drains on close. */
async function serve(
  app: (req: IncomingMessage, res: ServerResponse) => void,
  port: number,
  host: string,
  configure: (server: Server) => void,
  portName: string,
  slowClients: SlowClientLimits,
): Promise<Listening> {
  const server: Server = createServer(serverLimits(slowClients), (req: IncomingMessage, res: ServerResponse) => {
    drain.track(req, res);
    if (needsHost(req)) return rejectMissingHost(res);
    const target = originForm(req.url ?? '');
    if (target === undefined) return rejectTarget(res);
    req.url = target;
    app(req, res);
  });
  server.on('clientError', answerClientError(MAX_REQUEST_HEAD_BYTES));
  server.on('checkExpectation', rejectExpectation);
  server.on('connect', rejectConnect);
  configure(server);
  const drain = drainConnections(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new ListenError(host, port, err, portName)));
    server.listen(port, host, () => resolve());
  });
  server.keepAliveTimeout = 65_000; // longer than common load-balancer idle timeouts
  const actual = (server.address() as AddressInfo).port;
  return {
    server,
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

export interface ListenOptions {
  connections?: ConnectionLimits;
  /** A second listener on `host` serving only the probes and the metrics; undefined: none. */
  managementPort?: number | undefined;
  /** Default SLOW_CLIENT_LIMITS. */
  slowClients?: SlowClientLimits;
}

export async function listen(deps: AppDeps, port: number, host: string, options: ListenOptions = {}): Promise<HttpListener> {
  const app = createApp(deps);
  const connections = options.connections ?? DEFAULT_CONNECTION_LIMITS;
  // Express's compiled `trust proxy` setting: whether a peer at hop 0 is a trusted proxy.
  const trusted = app.get('trust proxy fn') as (address: string, hop: number) => boolean;
  const slowClients = options.slowClients ?? SLOW_CLIENT_LIMITS;
  const main = await serve(
    app,
    port,
    host,
    (server) => limitConnections(server, connections, (address) => trusted(address, 0)),
    'PORT',
    slowClients,
  );
  let management: Listening | undefined;
  if (options.managementPort !== undefined) {
    // Its own listener, with its own connection budget, so probes and scrapes get through when the
    // public one is full. Only the three paths reach the app; the rest is a 404 before it.
    const probes = (req: IncomingMessage, res: ServerResponse) => {
      const path = (req.url ?? '').split('?', 1)[0]!;
      if (MANAGEMENT_PATHS.has(path)) return app(req, res);
      answerEarly(res, 404, problemFor(404, 'Only /-/live, /-/ready and /-/metrics are served on the management port.'));
    };
    try {
      management = await serve(
        probes,
        options.managementPort,
        host,
        (server) => (server.maxConnections = MANAGEMENT_MAX_CONNECTIONS),
        'CHATBRIDGE_MANAGEMENT_PORT',
        slowClients,
      );
    } catch (error) {
      await main.close();
      throw error;
    }
  }
  return {
    url: main.url,
    port: main.port,
    managementUrl: management?.url,
    close: async () => {
      await Promise.all([main.close(), management?.close()]);
    },
  };
}
