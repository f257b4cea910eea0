// Starting and stopping an HTTP server around createApp; used by main.ts and by the tests.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './http/app.ts';
import type { AppDeps } from './http/deps.ts';

export interface RunningServer {
  url: string;
  port: number;
  /** Stops accepting, finishes in-flight requests, closes the store. */
  close(): Promise<void>;
}

export async function startServer(deps: AppDeps, port: number, host: string): Promise<RunningServer> {
  const app = createApp(deps);
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  server.keepAliveTimeout = 65_000; // longer than common load-balancer idle timeouts
  const actual = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return {
    url: `http://${shownHost}:${actual}`,
    port: actual,
    async close() {
      deps.readiness.draining = true;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await deps.store.close();
    },
  };
}
