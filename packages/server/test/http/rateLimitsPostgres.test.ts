// On PostgreSQL the rate-limit counters are shared, so a limit holds across instances.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.ts';
import { startTestServer, type TestServer } from '../../src/testing.ts';
import { createScratchDatabase, type ScratchDatabase } from '../store/pgScratch.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const WRONG = `cbt_${'w'.repeat(72)}`;

describe.runIf(!!DATABASE_URL)('rate limits across instances (PostgreSQL)', () => {
  let db: ScratchDatabase;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    db = await createScratchDatabase(DATABASE_URL!);
    const settings = { authFailuresPerMinute: 4, perEndpointPerSecond: 3 };
    const open = () => openStore({ kind: 'postgres', databaseUrl: db.url, poolSize: 4 });
    a = await startTestServer({ store: await open(), rateLimits: settings });
    b = await startTestServer({ store: await open(), rateLimits: settings });
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await db?.drop();
  });

  // The budget test runs first: the failed-authentication test blocks this address afterwards.
  it('when one endpoint is called through both instances, then they share its budget', async () => {
    // The budget is per second from an endpoint's first request: the eight must all fall in that
    // second, which a loaded machine may miss, so a round that took longer is tried again on a fresh
    // endpoint (up to three rounds).
    let statuses: number[] = [];
    for (let round = 1; round <= 3; round++) {
      const id = `shared-2-${round}`;
      const token = await a.provision(id);
      const started = performance.now();
      statuses = [];
      for (let i = 0; i < 8; i++) statuses.push((await fetch(`${(i % 2 ? a : b).url}/${id}?token=${token}`)).status);
      if (performance.now() - started < 800) break;
    }
    // 3 per second plus a burst of 3: requests 7 and 8 of the same second are refused, whichever instance.
    expect(statuses.filter((s) => s === 200)).toHaveLength(6);
    expect(statuses.slice(6)).toEqual([429, 429]);
  });

  it('when many requests of one endpoint arrive at once on both instances, then each is counted once: exactly the budget passes', async () => {
    const token = await a.provision('shared-3');
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => fetch(`${(i % 2 ? a : b).url}/shared-3?token=${token}`)));
    const passed = responses.filter((r) => r.status === 200);
    // 3 per second plus a burst of 3, whichever instance and however the requests were batched.
    expect(passed).toHaveLength(6);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(14);
    // Each request within the second's budget saw its own place in the count (2, 1, 0 left); the
    // three let through by the burst allowance report the second's budget, spent.
    const remaining = passed.map((r) => Number(r.headers.get('RateLimit-Remaining'))).sort();
    expect(remaining).toEqual([0, 0, 0, 0, 1, 2]);
  });

  it('when one address fails 30 times against one endpoint through both instances, then its valid requests to three other endpoints all get 200', async () => {
    // Without the per-endpoint rate limit, which these 90 requests in a second or two would reach.
    const settings = {
      authFailuresPerMinute: 4,
      authFailuresPerAddressPerMinute: 3_000,
      perEndpointPerSecond: 0,
    };
    const open = () => openStore({ kind: 'postgres', databaseUrl: db.url, poolSize: 2 });
    const c = await startTestServer({ store: await open(), rateLimits: settings });
    const d = await startTestServer({ store: await open(), rateLimits: settings });
    try {
      await c.provision('stale');
      const served = await Promise.all(['pg-one', 'pg-two', 'pg-three'].map(async (id) => ({ id, token: await c.provision(id) })));
      const valid: number[] = [];
      const stale: number[] = [];
      for (let i = 0; i < 30; i++) {
        const server = i % 2 ? c : d;
        stale.push((await fetch(`${server.url}/stale?token=${WRONG}`)).status);
        for (const { id, token } of served) valid.push((await fetch(`${server.url}/${id}?token=${token}`)).status);
      }
      expect(valid.every((status) => status === 200)).toBe(true);
      expect(stale.slice(-5)).toEqual([429, 429, 429, 429, 429]); // the stale endpoint is limited all the same
    } finally {
      await Promise.all([c.close(), d.close()]);
    }
  });

  it('when failed authentications are spread over two instances, then the address is blocked for that endpoint on both', async () => {
    await a.provision('shared-1');
    for (const server of [a, b, a, b]) expect((await fetch(`${server.url}/shared-1?token=${WRONG}`)).status).toBe(401);
    // A failure is counted as its answer is sent, without holding the answer back, so the very next
    // request may still slip through; within a few it is refused on both instances.
    const blockedOn = async (server: TestServer) => {
      for (let i = 0; i < 3; i++) if ((await fetch(`${server.url}/shared-1?token=${WRONG}`)).status === 429) return true;
      return false;
    };
    expect(await blockedOn(a)).toBe(true);
    expect(await blockedOn(b)).toBe(true);
  });
});
