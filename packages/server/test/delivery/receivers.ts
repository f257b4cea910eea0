// Real HTTP receivers on 127.0.0.1 (port 0) for the webhook sender's tests, and senders closed after
// each test. The receivers are private addresses, so `sender()` defaults to allowPrivateWebhooks: true;
// the SSRF tests pass false to prove nothing gets through.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { createWebhookSender, type WebhookSender, type WebhookSenderOptions } from '../../src/delivery/send.ts';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  port: number;
  /** Requests that reached the handler, in order. */
  requests: Received[];
  /** TCP connections accepted (a refused-before-connect delivery leaves this at 0). */
  connections: number;
  url(path: string): string;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, r: Receiver) => void;

export const respond =
  (status: number, headers: Record<string, string> = {}, body = '') =>
  (_req: http.IncomingMessage, res: http.ServerResponse): void => {
    res.writeHead(status, headers);
    res.end(body);
  };

/** Registers the cleanup of one test file's receivers and senders; call it at the file's top level. */
export function receivers() {
  const servers: http.Server[] = [];
  const senders: WebhookSender[] = [];

  afterEach(async () => {
    await Promise.all(senders.splice(0).map((s) => s.close()));
    await Promise.all(
      servers.splice(0).map(
        (server) =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      ),
    );
  });

  async function receiver(handle: Handler): Promise<Receiver> {
    const r: Receiver = { port: 0, requests: [], connections: 0, url: (path) => `http://127.0.0.1:${r.port}${path}` };
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        r.requests.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        handle(req, res, r);
      });
    });
    server.on('connection', () => r.connections++);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    r.port = (server.address() as AddressInfo).port;
    return r;
  }

  /** Stops a receiver's server (its port then refuses connections). */
  async function stop(r: Receiver): Promise<void> {
    const index = servers.findIndex((s) => (s.address() as AddressInfo | null)?.port === r.port);
    const [server] = servers.splice(index, 1);
    await new Promise<void>((resolve) => server!.close(() => resolve()));
  }

  function sender(options: Partial<WebhookSenderOptions> = {}): WebhookSender {
    const s = createWebhookSender({ allowPrivateWebhooks: true, connectTimeoutMs: 1000, requestTimeoutMs: 2000, ...options });
    senders.push(s);
    return s;
  }

  return { receiver, stop, sender };
}
