// Listening and closing the HTTP side of the service.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.ts';
import type { AppDeps } from './http/deps.ts';
import { problemFor } from './http/problem.ts';
import { answerClientError } from './http/transport/clientError.ts';
import { type ConnectionLimits, DEFAULT_CONNECTION_LIMITS, limitConnections } from './http/transport/connectionLimits.ts';
import { displayUrl } from './http/transport/displayUrl.ts';
import { drainConnections } from './http/transport/drainConnections.ts';
import {
  answerEarly,
  needsHost,
  originForm,
  rejectConnect,
  rejectExpectation,
  rejectMissingHost,
  rejectTarget,
} from './http/transport/earlyAnswers.ts';
import { MAX_REQUEST_HEAD_BYTES, SLOW_CLIENT_LIMITS, type SlowClientLimits, requestLimits } from './http/transport/requestLimits.ts';

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
  const server: Server = createServer(requestLimits(slowClients), (req: IncomingMessage, res: ServerResponse) => {
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
