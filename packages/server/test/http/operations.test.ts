// What operators and browsers see: metrics, security headers, CORS policy, size limits, slow clients.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureGroupCommits } from '../../src/observability/instrumentStore.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { SLOW_CLIENT_LIMITS } from '../../src/http/transport/requestLimits.ts';
import type { EndpointStore, GroupCommitTiming } from '../../src/store/port.ts';
import { startTestServer, type TestServer } from '../../src/testing.ts';
import { useServer } from './harness.ts';

const h = useServer();

describe('metrics', () => {
  it('when requests and deliveries happen, then /-/metrics exposes them in Prometheus format, without endpoint IDs', async () => {
    const { id, token } = await h.endpoint('metrics');
    await h.client.getEndpoint(id, token);
    await h.client.getEndpoint(id, `cbt_${'n'.repeat(72)}`).catch(() => undefined);
    const r = await fetch(`${h.server.url}/-/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/plain');
    const text = await r.text();
    expect(text).toMatch(/chatbridge_http_requests_total\{operation="getEndpoint",status="200"\} [1-9]/);
    expect(text).toMatch(/chatbridge_http_requests_total\{operation="getEndpoint",status="401"\} [1-9]/);
    expect(text).toContain('chatbridge_http_request_duration_seconds_bucket{le="0.005",operation="getEndpoint"}');
    expect(text).toMatch(/chatbridge_store_operation_duration_seconds_count\{method="endpoints.get",result="ok"\} [1-9]/);
    for (const name of [
      'chatbridge_webhook_deliveries_total',
      'chatbridge_expired_messages_total',
      'chatbridge_pending_messages',
      'chatbridge_outbox_deliveries',
    ]) {
      expect(text).toContain(`# TYPE ${name}`);
    }
    // The runtime's own series, named once with the service's prefix.
    expect(text).toContain('# TYPE chatbridge_process_cpu_seconds_total counter');
    expect(text).toContain('# TYPE chatbridge_nodejs_heap_size_used_bytes gauge');
    expect(text).not.toContain('process_process_');
    expect(text).not.toContain(id);
    expect(text).not.toContain(token);
  });

  it('when updates commit on SQLite, then /-/metrics shows how long each group commit held the event loop and how many updates it carried', async () => {
    const { id, token } = await h.endpoint('metrics-commits');
    const scrape = async () => (await fetch(`${h.server.url}/-/metrics`)).text();
    // A labelled series appears with its first observation: absent counts as 0.
    const countOf = (text: string, series: string) => Number(new RegExp(`^${series} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    const before = await scrape();
    await Promise.all(['one', 'two', 'three'].map((message_content) => h.client.updateEndpoint(id, token, { message_content })));
    const after = await scrape();
    const updates = (text: string) => countOf(text, 'chatbridge_sqlite_group_commit_updates_sum');
    const commits = (text: string, phase: string) => countOf(text, `chatbridge_sqlite_group_commit_seconds_count\\{phase="${phase}"\\}`);
    // Every update is in exactly one group commit; three concurrent ones share one to three of them.
    expect(updates(after) - updates(before)).toBe(3);
    const added = commits(after, 'commit') - commits(before, 'commit');
    expect(added).toBeGreaterThanOrEqual(1);
    expect(added).toBeLessThanOrEqual(3);
    expect(commits(after, 'statements') - commits(before, 'statements')).toBe(added);
    expect(after).toContain('chatbridge_sqlite_group_commit_seconds_bucket{le="0.001",phase="commit"}');
  });

  it('when the store cannot be read at scrape time, then its gauges are NaN and every other metric is still exported', async () => {
    const down = () => Promise.reject(new Error('Connection terminated unexpectedly'));
    const metrics = createMetrics({ pendingMessages: down, queuedDeliveries: down });
    metrics.httpRequests.labels('getEndpoint', '200').inc();
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^chatbridge_pending_messages nan$/im); // prom-client writes "Nan"; Prometheus reads any case
    expect(text).toMatch(/^chatbridge_outbox_deliveries nan$/im);
    expect(text).toMatch(/^chatbridge_http_requests_total\{operation="getEndpoint",status="200"\} 1$/m);
    expect(text).toContain('chatbridge_process_cpu_seconds_total');
  });

  it('when the store has no group commits (PostgreSQL), then no group-commit series appear', async () => {
    const withoutGroupCommits = {} as EndpointStore;
    const metrics = createMetrics();
    measureGroupCommits(withoutGroupCommits, metrics);
    expect(await metrics.registry.metrics()).not.toContain('group_commit');
    // The same registry wiring, given a store that reports: the series appear.
    let report: ((c: GroupCommitTiming) => void) | undefined;
    measureGroupCommits(
      { observeGroupCommits: (listener: (c: GroupCommitTiming) => void) => void (report = listener) } as unknown as EndpointStore,
      metrics,
    );
    report!({ updates: 5, statementsMs: 0.2, commitMs: 0.4 });
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^chatbridge_sqlite_group_commit_updates_sum 5$/m);
    expect(text).toMatch(/^chatbridge_sqlite_group_commit_seconds_sum\{phase="commit"\} 0\.0004$/m);
  });
});

describe('security headers', () => {
  it('answers with helmet headers and no x-powered-by', async () => {
    const r = await fetch(`${h.server.url}/-/live`);
    expect(r.headers.get('x-powered-by')).toBeNull();
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    // Nothing may load, nobody may frame; no looser per-type directives beside default-src 'none'.
    expect(r.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
    expect(r.headers.get('strict-transport-security')).toContain('max-age=');
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    expect(r.headers.get('cache-control')).toBe('no-store');
    // Web-page headers a JSON response has no use for are not sent.
    for (const name of ['x-xss-protection', 'x-dns-prefetch-control', 'origin-agent-cluster', 'referrer-policy'])
      expect(r.headers.get(name)).toBeNull();
  });

  it('without configured origins, answers no CORS headers', async () => {
    const { id, token } = await h.endpoint('cors');
    const r = await fetch(`${h.server.url}/${id}?token=${token}`, { headers: { origin: 'https://evil.example' } });
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS with configured origins', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ corsOrigins: ['https://dashboard.example'] });
  });
  afterAll(() => server.close());

  it('allows the listed origin on record operations, never others, never the admin API', async () => {
    const token = await server.provision('cors-1');
    const allowed = await fetch(`${server.url}/cors-1?token=${token}`, { headers: { origin: 'https://dashboard.example' } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://dashboard.example');
    // The page can read the contract's own headers (the message number, rate limits, the request id).
    expect(allowed.headers.get('access-control-expose-headers')?.split(',')).toEqual(
      expect.arrayContaining(['Chatbridge-Message-Number', 'RateLimit-Remaining', 'Retry-After', 'X-Request-Id']),
    );
    const other = await fetch(`${server.url}/cors-1?token=${token}`, { headers: { origin: 'https://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(`${server.url}/update/cors-1`, {
      method: 'OPTIONS',
      headers: { origin: 'https://dashboard.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    const admin = await fetch(`${server.url}/admin/endpoints`, { headers: { origin: 'https://dashboard.example' } });
    expect(admin.headers.get('access-control-allow-origin')).toBeNull();
    // Paths match in any letter case: /ADMIN/ reaches the admin operations, and is the admin API here too.
    for (const path of ['/ADMIN/endpoints', '/Admin/Endpoints']) {
      const preflightAdmin = await fetch(`${server.url}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://dashboard.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      expect(preflightAdmin.headers.get('access-control-allow-origin')).toBeNull();
      const unauthorized = await fetch(`${server.url}${path}`, { headers: { origin: 'https://dashboard.example' } });
      expect(unauthorized.status).toBe(401);
      expect(unauthorized.headers.get('access-control-allow-origin')).toBeNull();
      expect(unauthorized.headers.get('www-authenticate')).toBe('Bearer realm="chatbridge-admin"');
    }
  });
});

describe('connection limits', () => {
  /** Opens a connection and tells whether the server kept it: one it refuses is closed at once. */
  const connectionKept = async (url: string) => {
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const closed = await Promise.race([
      new Promise<boolean>((resolve) => socket.once('close', () => resolve(true))),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 300)),
    ]);
    return { kept: !closed, socket };
  };

  it('when one address holds its share of connections, then its next is closed at once, and a freed one can be opened again', async () => {
    const server = await startTestServer({ connections: { max: 100, perAddress: 3 } });
    const open: Socket[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const c = await connectionKept(server.url);
        expect(c.kept).toBe(true);
        open.push(c.socket);
      }
      const fourth = await connectionKept(server.url);
      expect(fourth.kept).toBe(false);
      open.pop()!.destroy();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const again = await connectionKept(server.url);
      expect(again.kept).toBe(true);
      open.push(again.socket);
    } finally {
      for (const s of open) s.destroy();
      await server.close();
    }
  });

  it('when the server holds its total of connections, then the next is closed at once', async () => {
    const server = await startTestServer({ connections: { max: 2, perAddress: 0 } });
    const open: Socket[] = [];
    try {
      for (let i = 0; i < 2; i++) open.push((await connectionKept(server.url)).socket);
      const third = await connectionKept(server.url);
      expect(third.kept).toBe(false);
    } finally {
      for (const s of open) s.destroy();
      await server.close();
    }
  });
});

describe('size limits and slow clients', () => {
  it('when a JSON body exceeds 16 KiB, then 413 problem+json', async () => {
    const r = await fetch(`${h.server.url}/admin/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.server.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'x'.repeat(20_000) }),
    });
    expect(r.status).toBe(413);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
  });

  it('when a bot also sends its parameters as a JSON body, then the record operations ignore it, whatever its size or content', async () => {
    const { id, token } = await h.endpoint('body');
    const params = { token, message_content: '😀'.repeat(1500), message_reply_message: 'é'.repeat(1500) };
    const query = new URLSearchParams(params).toString();
    // Python's json.dumps escapes every non-ASCII character: ~21 KiB here, over the admin API's 16 KiB.
    const escaped = JSON.stringify(params).replace(/[^\x00-\x7f]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
    expect(escaped.length).toBeGreaterThan(16 * 1024);
    for (const body of [escaped, 'null', '1', '"text"', '{not json']) {
      const r = await fetch(`${h.server.url}/update/${id}?${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect([body.slice(0, 10), r.status]).toEqual([body.slice(0, 10), 200]);
    }
    expect((await h.client.getEndpoint(id, token)).meta.message.content).toBe(params.message_content);
  });

  it('when an endpoint is named admin, then its record path is a record operation: body ignored, the endpoint challenge on 401', async () => {
    const token = await h.server.provision('admin');
    // fetch sends no body with GET; node:http does, as some bots' HTTP libraries do.
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(
        `${h.server.url}/admin?token=${token}`,
        { method: 'GET', headers: { 'content-type': 'application/json', 'content-length': '4' } },
        (res) => {
          res.resume();
          resolve(res.statusCode);
        },
      );
      req.on('error', reject);
      req.end('null');
    });
    expect(status).toBe(200);
    for (const path of ['/ADMIN', '/admin/']) {
      const wrong = await fetch(`${h.server.url}${path}?token=${'x'.repeat(76)}`);
      expect([path, wrong.status]).toEqual([path, 401]);
      expect(wrong.headers.get('www-authenticate')).toBe('ApiKey realm="chatbridge", in="query", name="token"');
    }
  });

  it('when a GET operation is asked with HEAD, then it answers as GET without a body', async () => {
    const { id, token } = await h.endpoint('head');
    const live = await fetch(`${h.server.url}/-/live`, { method: 'HEAD' });
    expect(live.status).toBe(200);
    expect(await live.text()).toBe('');
    const record = await fetch(`${h.server.url}/${id}?token=${token}`, { method: 'HEAD' });
    expect(record.status).toBe(200);
    expect(record.headers.get('content-type')).toContain('application/json');
    expect(await record.text()).toBe('');
    expect((await fetch(`${h.server.url}/${id}?token=cbt_${'n'.repeat(72)}`, { method: 'HEAD' })).status).toBe(401);
  });

  it('when a method is not allowed at a path, then 405 with an Allow header naming the allowed ones', async () => {
    const { id, token } = await h.endpoint('allow');
    const put = await fetch(`${h.server.url}/update/${id}?token=${token}`, { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('POST');
    expect(put.headers.get('content-type')).toContain('application/problem+json');
    expect(((await put.json()) as { detail: string }).detail).toContain('POST');
    const del = await fetch(`${h.server.url}/-/live`, { method: 'DELETE' });
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('GET, HEAD'); // every GET is answered as HEAD too
  });

  it('when the request head exceeds 128 KiB, then a 431 problem document; just under, it reaches the app', async () => {
    const { id, token } = await h.endpoint('big');
    const under = await fetch(`${h.server.url}/${id}?token=${token}&pad=${'x'.repeat(120_000)}`);
    expect(under.status).toBe(400); // answered by the app: `pad` is an unknown parameter
    const over = await fetch(`${h.server.url}/${id}?token=${token}&pad=${'x'.repeat(140_000)}`);
    expect(over.status).toBe(431);
    expect(over.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    const problem = (await over.json()) as Record<string, unknown>;
    expect(problem).toMatchObject({ type: 'https://chatbridge.dev/problems#header-too-large', status: 431 });
    expect(problem.detail).toContain('128 KiB');
    expect(problem.message).toBe(problem.detail);
    expect(JSON.stringify(problem)).not.toContain(token); // nothing of the request is echoed
  });

  it('when the request line is not HTTP, then a 400 problem document naming the fault, without parameters', async () => {
    const answer = await rawExchange('GET /-/live HTTP/1.1 junk\r\nHost: x\r\n\r\n');
    expect(answer.text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer.text).toContain('Content-Type: application/problem+json; charset=utf-8');
    const problem = JSON.parse(answer.text.slice(answer.text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    expect(problem).toMatchObject({ type: 'https://chatbridge.dev/problems#validation', status: 400 });
    expect(problem.detail).toMatch(/^The request is not valid HTTP\/1\.1: .+ \(HPE_[A-Z_]+\)\.$/);
    expect(problem).not.toHaveProperty('errors');
  });

  it('when a client sends its head too slowly, then a 408 problem document and the server closes the connection', async () => {
    // A head limit of a second, so the test does not wait the production 10 s; Node measures it the
    // same way whatever its length (the default is checked against the spec below).
    const slowClients = { headersTimeoutMs: 1_000, requestTimeoutMs: 3_000, checkIntervalMs: 100 };
    const server = await startTestServer({ slowClients });
    try {
      const answer = await rawExchange('GET /-/live HTTP/1.1\r\nHost: x\r\n', server.port);
      // Not before the limit; after it within a few of Node's checks (slack for a busy machine).
      expect(answer.closedAfterMs).toBeGreaterThanOrEqual(900);
      expect(answer.closedAfterMs).toBeLessThan(6_000);
      expect(answer.text).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      expect(answer.text).toContain('"type":"https://chatbridge.dev/problems#request-timeout"');
    } finally {
      await server.close();
    }
  });

  it("when no limits are configured, then a client has the spec's 10 seconds to send its head and 30 for the whole request", () => {
    const problemTable = readFileSync(new URL('../../../../openapi/components/schemas/Problem.yaml', import.meta.url), 'utf8');
    const promised = /\| `request-timeout` \| 408 \| the request head did not arrive within (\d+) seconds \|/.exec(problemTable)?.[1];
    expect(promised).toBeDefined();
    expect(SLOW_CLIENT_LIMITS.headersTimeoutMs).toBe(Number(promised) * 1000);
    expect(SLOW_CLIENT_LIMITS.requestTimeoutMs).toBe(30_000);
    // Node looks for late heads on this timer: a coarser one would let a head be late by as much again.
    expect(SLOW_CLIENT_LIMITS.checkIntervalMs).toBeLessThanOrEqual(SLOW_CLIENT_LIMITS.headersTimeoutMs / 10);
  });
});

/** Sends `bytes` as they are and collects everything the server writes until it closes the connection. */
function rawExchange(bytes: string, port = h.server.port): Promise<{ text: string; closedAfterMs: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString('utf8'), closedAfterMs: Date.now() - started }));
    socket.on('error', () => undefined);
  });
}
