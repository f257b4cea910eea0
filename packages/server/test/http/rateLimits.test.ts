import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetExpiredBlocks } from '../../src/http/rateLimits.ts';
import { startTestServer, type TestServer } from '../../src/testing.ts';
import { raw } from './harness.ts';

const WRONG = `cbt_${'w'.repeat(72)}`;

describe('rate limits', () => {
  let server: TestServer;
  let token: string;
  beforeAll(async () => {
    server = await startTestServer({
      rateLimits: { authFailuresPerMinute: 3, perEndpointPerSecond: 5, backend: { kind: 'memory' } },
    });
    token = await server.provision('limited');
    await server.provision('busy');
  });
  afterAll(() => server.close());

  it('when a client fails authentication too often, then it gets 429 with Retry-After, even with a right token', async () => {
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

/** A test server with these limits (in memory) for the tests of the enclosing describe block. */
function serverWithLimits(authFailuresPerMinute: number, perEndpointPerSecond: number): () => TestServer {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ rateLimits: { authFailuresPerMinute, perEndpointPerSecond, backend: { kind: 'memory' } } });
  });
  afterAll(() => server.close());
  return () => server;
}

describe('failed authentications without credentials', () => {
  const serverUnderTest = serverWithLimits(3, 0);

  it('when requests bring no token or no admin bearer, then their 401s count toward the limit too', async () => {
    const server = serverUnderTest();
    const token = await server.provision('bare');
    for (const path of ['/bare', '/bare', '/admin/endpoints']) expect((await raw(`${server.url}${path}`)).status).toBe(401);
    expect((await fetch(`${server.url}/bare?token=${token}`)).status).toBe(429);
  });
});

describe('per-endpoint rate limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      rateLimits: { authFailuresPerMinute: 0, perEndpointPerSecond: 5, backend: { kind: 'memory' } },
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

  it('when requests carry a wrong token, then they do not drain the owner\'s budget', async () => {
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
