// A store outage through a TCP proxy in front of PostgreSQL that the test cuts and restores (the
// machine's database itself keeps running for the other tests).
import { createServer, type Server, Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresEndpointStore } from '../src/store/postgres/store.ts';
import { startTestServer, type TestServer } from '../src/testing.ts';
import { eventually } from './http/receiver.ts';
import { createScratchDatabase, type ScratchDatabase } from './store/pgScratch.ts';

const DATABASE_URL = process.env.DATABASE_URL;

/**
 * Forwards TCP to the real database until cut or stalled. Cutting drops every connection and refuses
 * new ones (a stopped server); stalling stops passing bytes on every connection and accepts new ones
 * without answering them (a partition, or a server that hangs).
 */
async function startCuttableProxy(target: URL) {
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  let server: Server | undefined;
  let port = 0;
  let stalled = false;
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const listen = async () => {
    if (server?.listening) return;
    server = createServer((client) => {
      track(client);
      if (stalled) return; // accepted, never answered
      const upstream = new Socket();
      upstream.connect(Number(target.port || 5432), target.hostname);
      track(upstream);
      const pair: [Socket, Socket] = [client, upstream];
      pairs.add(pair);
      client.on('close', () => pairs.delete(pair));
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
    stall() {
      stalled = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    async restore() {
      if (stalled) {
        stalled = false;
        for (const s of sockets) s.destroy(); // the stalled connections are dead to their clients
      }
      await listen();
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => (server?.listening ? server.close(() => resolve()) : resolve()));
    },
  };
}

/**
 * The store's timeouts, shorter than its defaults (connect 5 s, statement 5 s, and the client's own
 * limit 2 s past that: 7 s) so that the outages below end in seconds; an outage is met the same way
 * whatever they are.
 */
const STORE_TIMEOUTS = { connectionTimeoutMs: 1000, statementTimeoutMs: 1000 };
/** A request meets the store's client-side limit on a stalled connection (statement timeout + 2 s). */
const STALLED_QUERY_MS = STORE_TIMEOUTS.statementTimeoutMs + 2000;

/**
 * A scratch database behind the proxy and a server on it, set up for the enclosing describe; with
 * `sharedRateLimits`, the rate-limit counters live in that database too (through the proxy).
 */
function useServerBehindProxy(endpointId: string, { sharedRateLimits = false } = {}) {
  const env = {} as { db: ScratchDatabase; proxy: Awaited<ReturnType<typeof startCuttableProxy>>; server: TestServer; token: string };
  beforeAll(async () => {
    env.db = await createScratchDatabase(DATABASE_URL!);
    env.proxy = await startCuttableProxy(new URL(env.db.url));
    const databaseUrl = env.proxy.url(env.db.url);
    env.server = await startTestServer({
      store: await PostgresEndpointStore.open({ connectionString: databaseUrl, poolSize: 4, ...STORE_TIMEOUTS }),
      ...(sharedRateLimits && {
        rateLimits: { authFailuresPerMinute: 10, perEndpointPerSecond: 50 },
      }),
    });
    env.token = await env.server.provision(endpointId);
  });
  afterAll(async () => {
    await env.proxy?.restore().catch(() => undefined);
    await env.server?.close().catch(() => undefined);
    await env.proxy?.close();
    await env.db?.drop();
  });
  return env;
}

describe.runIf(!!DATABASE_URL)('store outage (PostgreSQL unreachable)', () => {
  const env = useServerBehindProxy('outage-1');

  it('when the database becomes unreachable, then requests get 503 quickly, readiness fails, and service resumes by itself', async () => {
    expect((await fetch(`${env.server.url}/outage-1?token=${env.token}`)).status).toBe(200);
    await env.proxy.cut();

    const started = Date.now();
    const during = await fetch(`${env.server.url}/outage-1?token=${env.token}`);
    expect(during.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(4000);
    expect(during.headers.get('content-type')).toContain('application/problem+json');
    expect(during.headers.get('retry-after')).toBe('1');
    expect(((await during.json()) as { type: string }).type).toBe('https://chatbridge.dev/problems#unavailable');
    const update = await fetch(`${env.server.url}/update/outage-1?token=${env.token}&channel_chat_c=during-outage`, { method: 'POST' });
    expect(update.status).toBe(503);

    const ready = await fetch(`${env.server.url}/-/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'not_ready', checks: { store: 'unavailable' } });
    expect((await fetch(`${env.server.url}/-/live`)).status).toBe(200);

    await env.proxy.restore();
    await eventually(async () => (await fetch(`${env.server.url}/-/ready`)).status === 200, 10_000);
    const after = await fetch(`${env.server.url}/outage-1?token=${env.token}`);
    expect(after.status).toBe(200);
    // The update answered 503 was not applied.
    expect(((await after.json()) as { config: { channels: { chat_c: string[] } } }).config.channels.chat_c).toEqual([]);
  });
});

describe.runIf(!!DATABASE_URL)('store outage (PostgreSQL stops answering, rate limits shared on it)', () => {
  const env = useServerBehindProxy('stall-1', { sharedRateLimits: true });

  it('when the database stops answering, then requests get 503 within the timeouts, metrics still scrape, and service resumes', async () => {
    expect((await fetch(`${env.server.url}/stall-1?token=${env.token}`)).status).toBe(200); // the pools hold connections now
    env.proxy.stall();

    // The counters give up after 1 s (the in-memory insurance counts), the store after its
    // client-side limit on a stalled connection, or its connect timeout on a new one.
    const started = Date.now();
    const [read, update] = await Promise.all([
      fetch(`${env.server.url}/stall-1?token=${env.token}`, { signal: AbortSignal.timeout(20_000) }),
      fetch(`${env.server.url}/update/stall-1?token=${env.token}&channel_chat_c=during-stall`, {
        method: 'POST',
        signal: AbortSignal.timeout(20_000),
      }),
    ]);
    expect([read.status, update.status]).toEqual([503, 503]);
    expect(Date.now() - started).toBeLessThan(STALLED_QUERY_MS + 4_000); // slack for a busy machine
    expect(((await read.json()) as { type: string }).type).toBe('https://chatbridge.dev/problems#unavailable');
    // A connect that gets no answer (the pool opens new connections now) is an outage too, not a bug.
    const again = await fetch(`${env.server.url}/stall-1?token=${env.token}`, { signal: AbortSignal.timeout(20_000) });
    expect(again.status).toBe(503);

    const metrics = await fetch(`${env.server.url}/-/metrics`, { signal: AbortSignal.timeout(20_000) });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^chatbridge_pending_messages nan$/im);

    await env.proxy.restore();
    await eventually(async () => (await fetch(`${env.server.url}/stall-1?token=${env.token}`)).status === 200, 15_000);
  }, 90_000);
});
