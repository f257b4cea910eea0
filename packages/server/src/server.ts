// Listening and closing the HTTP side of the service.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './http/app.ts';
import type { AppDeps } from './http/deps.ts';

/** Request line plus headers; room for every update parameter at its maximum, fully encoded. */
export const MAX_REQUEST_HEAD_BYTES = 128 * 1024;

export interface HttpListener {
  url: string;
  port: number;
  /** Stops accepting connections and resolves when in-flight requests have finished. */
  close(): Promise<void>;
}

export async function listen(deps: AppDeps, port: number, host: string): Promise<HttpListener> {
  // Every update parameter travels in the query string: 1500 code points percent-encoded can take
  // 18 KB, more than Node's default 16 KB header limit, so the limit is raised.
  const server: Server = createServer({ maxHeaderSize: MAX_REQUEST_HEAD_BYTES }, createApp(deps));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  server.keepAliveTimeout = 65_000; // longer than common load-balancer idle timeouts
  // Slow clients: the head must arrive within 10 s and the whole request within 30 s.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const actual = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return {
    url: `http://${shownHost}:${actual}`,
    port: actual,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
