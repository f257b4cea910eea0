// A store outage through a TCP proxy in front of PostgreSQL that the test cuts and restores (the
// machine's database itself keeps running for the other tests).
import { createServer, type Server, Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/store/open.ts';
import { startTestServer, type TestServer } from '../src/testing.ts';
import { eventually } from './http/receiver.ts';
import { createScratchDatabase, type ScratchDatabase } from './store/pgScratch.ts';

const DATABASE_URL = process.env.DATABASE_URL;

/** Forwards TCP to the real database until cut; cutting drops every connection and refuses new ones. */
async function startCuttableProxy(target: URL) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const listen = async () => {
    if (server?.listening) return;
    server = createServer((client) => {
      const upstream = new Socket();
      upstream.connect(Number(target.port || 5432), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server!.address() as AddressInfo).port;
  };
  await listen();
  return {
    url: (databaseUrl: string) => {
      const u = new URL(databaseUrl);
      u.host = `127.0.0.1:${port}`;
      return u.toString();
    },
    async cut() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
    },
    restore: listen,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => (server?.listening ? server.close(() => resolve()) : resolve()));
    },
  };
}

describe.runIf(!!DATABASE_URL)('store outage (PostgreSQL unreachable)', () => {
  let db: ScratchDatabase;
  let proxy: Awaited<ReturnType<typeof startCuttableProxy>>;
  let server: TestServer;
  let token: string;
  beforeAll(async () => {
    db = await createScratchDatabase(DATABASE_URL!);
    proxy = await startCuttableProxy(new URL(db.url));
    server = await startTestServer({ store: await openStore({ kind: 'postgres', databaseUrl: proxy.url(db.url), poolSize: 4 }) });
    token = await server.provision('outage-1');
  });
  afterAll(async () => {
    await proxy?.restore().catch(() => undefined);
    await server?.close().catch(() => undefined);
    await proxy?.close();
    await db?.drop();
  });

  it('when the database becomes unreachable, then requests get 503 quickly, readiness fails, and service resumes by itself', async () => {
    expect((await fetch(`${server.url}/outage-1?token=${token}`)).status).toBe(200);
    await proxy.cut();

    const started = Date.now();
    const during = await fetch(`${server.url}/outage-1?token=${token}`);
    expect(during.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(4000);
    expect(during.headers.get('content-type')).toContain('application/problem+json');
    expect(during.headers.get('retry-after')).toBe('1');
    expect(((await during.json()) as { type: string }).type).toBe('https://chatbridge.dev/problems#unavailable');
    const update = await fetch(`${server.url}/update/outage-1?token=${token}&channel_chat_c=during-outage`, { method: 'POST' });
    expect(update.status).toBe(503);

    const ready = await fetch(`${server.url}/-/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'not_ready', checks: { store: 'unavailable' } });
    expect((await fetch(`${server.url}/-/live`)).status).toBe(200);

    await proxy.restore();
    await eventually(async () => (await fetch(`${server.url}/-/ready`)).status === 200, 10_000);
    const after = await fetch(`${server.url}/outage-1?token=${token}`);
    expect(after.status).toBe(200);
    // The update answered 503 was not applied.
    expect(((await after.json()) as { config: { channels: { chat_c: string[] } } }).config.channels.chat_c).toEqual([]);
  });
});
