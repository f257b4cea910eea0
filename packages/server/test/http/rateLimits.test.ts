import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { forgetExpiredBlocks } from '../../src/http/auth/rateLimits.ts';
import { startTestServer, type TestServer } from '../../src/testing.ts';
import { raw } from './harness.ts';

const WRONG = `cbt_${'w'.repeat(72)}`;

describe('rate limits', () => {
  let server: TestServer;
  let token: string;
  beforeAll(async () => {
    server = await startTestServer({
      rateLimits: { authFailuresPerMinute: 3, perEndpointPerSecond: 5 },
    });
    token = await server.provision('limited');
    await server.provision('busy');
  });
  afterAll(() => server.close());

  it('when a client fails authentication against an endpoint too often, then it gets 429 with Retry-After there, even with a right token', async () => {
    for (let i = 0; i < 3; i++) expect((await raw(`${server.url}/limited?token=${WRONG}`)).status).toBe(401);
    const blocked = await fetch(`${server.url}/limited?token=${token}`);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(blocked.headers.get('content-type')).toContain('application/problem+json');
    expect(((await blocked.json()) as { type: string }).type).toBe('https://chatbridge.dev/problems#rate-limited');
    // Health probes are not authenticated and never limited.
    expect((await raw(`${server.url}/-/live`)).status).toBe(200);
  });
});

describe('failed authentications of one stale token on a bot host', () => {
  it('when one address polls a stale token every 2 s for three minutes, then its valid requests to three other endpoints all get 200', async () => {
    // Only Date is faked: the limiters' windows follow it, the HTTP server's own timers stay real.
    vi.useFakeTimers({ toFake: ['Date'] });
    const server = await startTestServer({
      rateLimits: {
        authFailuresPerMinute: 10,
        authFailuresPerAddressPerMinute: 3_000,
        perEndpointPerSecond: 50,
      },
    });
    try {
      await server.provision('stale');
      const served = await Promise.all(['one', 'two', 'three'].map(async (id) => ({ id, token: await server.provision(id) })));
      const stale: number[] = [];
      const valid: number[] = [];
      for (let poll = 0; poll < 90; poll++) {
        stale.push((await fetch(`${server.url}/stale?token=${WRONG}`)).status);
        for (const { id, token } of served) valid.push((await fetch(`${server.url}/${id}?token=${token}`)).status);
        vi.setSystemTime(Date.now() + 2_000);
      }
      expect(valid).toHaveLength(270);
      expect(valid.every((status) => status === 200)).toBe(true);
      // The stale endpoint itself is still limited: 10 failures a minute, then 429 until the minute is up.
      expect(stale.filter((status) => status === 401).length).toBeGreaterThanOrEqual(30);
      expect(stale.filter((status) => status === 401).length).toBeLessThanOrEqual(40);
      expect(stale.filter((status) => status === 429).length).toBeGreaterThanOrEqual(50);
    } finally {
      await server.close();
      vi.useRealTimers();
    }
  });

  it('when one address fails against more endpoints than its ceiling allows, then all its authenticated requests get 429', async () => {
    const server = await startTestServer({
      rateLimits: { authFailuresPerMinute: 10, authFailuresPerAddressPerMinute: 4, perEndpointPerSecond: 0 },
    });
    try {
      const token = await server.provision('kept');
      for (const id of ['gone-1', 'gone-2', 'gone-3', 'gone-4']) expect((await raw(`${server.url}/${id}?token=${WRONG}`)).status).toBe(401);
      const refused = await raw(`${server.url}/kept?token=${token}`);
      expect(refused.status).toBe(429);
      expect(refused.body.detail).toMatch(/from this address/);
    } finally {
      await server.close();
    }
  });
});

/** A test server with these limits (in memory) for the tests of the enclosing describe block. */
function serverWithLimits(authFailuresPerMinute: number, perEndpointPerSecond: number): () => TestServer {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ rateLimits: { authFailuresPerMinute, perEndpointPerSecond } });
  });
  afterAll(() => server.close());
  return () => server;
}

describe('failed authentications without credentials', () => {
  const serverUnderTest = serverWithLimits(3, 0);

  it('when requests bring no token or no admin bearer, then their 401s count toward the limit too', async () => {
    const server = serverUnderTest();
    const token = await server.provision('bare');
    for (let i = 0; i < 3; i++) expect((await raw(`${server.url}/bare`)).status).toBe(401);
    expect((await fetch(`${server.url}/bare?token=${token}`)).status).toBe(429);
    for (let i = 0; i < 3; i++) expect((await raw(`${server.url}/admin/endpoints`)).status).toBe(401);
    const admin = await fetch(`${server.url}/admin/endpoints`, { headers: { authorization: `Bearer ${server.adminToken}` } });
    expect(admin.status).toBe(429);
  });
});

describe('per-endpoint rate limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      rateLimits: { authFailuresPerMinute: 0, perEndpointPerSecond: 5 },
    });
  });
  afterAll(() => server.close());

  it('when an endpoint exceeds its rate and burst, then 429 with RateLimit headers, and other endpoints are unaffected', async () => {
    const busy = await server.provision('busy');
    const calm = await server.provision('calm');
    const first = await fetch(`${server.url}/busy?token=${busy}`);
    expect(first.headers.get('ratelimit-limit')).toBe('5');
    expect(Number(first.headers.get('ratelimit-remaining'))).toBe(4);
    const statuses = [first.status];
    for (let i = 0; i < 14; i++) statuses.push((await fetch(`${server.url}/busy?token=${busy}`)).status);
    // 5 per second plus a burst of 5 over 10 s: the 11th request in the same second is refused.
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.slice(10).every((s) => s === 429)).toBe(true);
    expect((await fetch(`${server.url}/calm?token=${calm}`)).status).toBe(200);
  });

  it("when requests carry a wrong token, then they do not drain the owner's budget", async () => {
    const owner = await server.provision('owned');
    for (let i = 0; i < 20; i++) await fetch(`${server.url}/owned?token=${WRONG}`);
    expect((await fetch(`${server.url}/owned?token=${owner}`)).status).toBe(200);
  });
});

describe('blocked addresses', () => {
  it('when the blocks of addresses that never came back have run out, then they are forgotten and live blocks stay', () => {
    const blocked = new Map<string, number>([
      ['2001:db8::1', 1_000],
      ['2001:db8::2', 5_000],
      ['198.51.100.7', 2_000],
    ]);
    forgetExpiredBlocks(blocked, 2_000);
    expect([...blocked.keys()]).toEqual(['2001:db8::2']);
  });
});
