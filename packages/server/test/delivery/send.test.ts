import { describe, expect, it } from 'vitest';
import type { WebhookPayload } from '../../src/delivery/payload.ts';
import { parseRetryAfter, redactWebhookUrl, type SendOutcome } from '../../src/delivery/send.ts';
import { receivers, respond } from './receivers.ts';

// Real HTTP receivers on 127.0.0.1 (port 0). They are private addresses, so every test that reaches one
// uses allowPrivateWebhooks: true; the SSRF tests prove allowPrivateWebhooks: false never lets a request through.
const { receiver, stop, sender } = receivers();

const SECRET = 'S3cr3tT0k3nAbCdEfGhIjKlMnOpQrStUvWxYz0123456789';
const HOOK_PATH = `/api/webhooks/123456789012345678/${SECRET}?wait=true`;
const payload: WebhookPayload = {
  content: 'Hello & welcome ✓',
  username: 'Alice',
  avatar_url: 'https://cdn.example.com/a.png',
  allowed_mentions: { parse: [] },
};

/** A create, as the relay asks for it (HOOK_PATH has its `wait=true` already). */
const create = { kind: 'create', payload } as const;

function expectNoSecret(outcome: SendOutcome) {
  const text = JSON.stringify(outcome);
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain('/api/webhooks');
}

describe('webhook sender: answers from the receiver', () => {
  it('when the receiver answers 204, then delivered, with the exact JSON body and headers received', async () => {
    const r = await receiver(respond(204));
    const outcome = await sender({ userAgent: 'chatbridge-test/1' }).deliver(r.url(HOOK_PATH), create, 'ep-1:7:chat_a');
    expect(outcome).toEqual({ kind: 'delivered', status: 204 });
    expect(r.requests).toHaveLength(1);
    const [got] = r.requests;
    expect(got!.method).toBe('POST');
    expect(got!.url).toBe(HOOK_PATH);
    expect(got!.headers['idempotency-key']).toBe('ep-1:7:chat_a');
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['user-agent']).toBe('chatbridge-test/1');
    expect(got!.body).toBe(JSON.stringify(payload));
    expect(JSON.parse(got!.body)).toEqual(payload);
  });

  it('when the receiver answers 200 with a body, then delivered and the connection is reused for the next send', async () => {
    const r = await receiver(respond(200, { 'content-type': 'application/json' }, JSON.stringify({ junk: 'x'.repeat(10_000) })));
    const s = sender();
    expect(await s.deliver(r.url(HOOK_PATH), create, 'k1')).toEqual({ kind: 'delivered', status: 200 });
    // undici returns the socket to the pool a tick after the body is consumed; back-to-back sends
    // would open a second connection (the pool is unbounded), not fail.
    await new Promise((resolve) => setImmediate(resolve));
    expect(await s.deliver(r.url(HOOK_PATH), create, 'k2')).toEqual({ kind: 'delivered', status: 200 });
    expect(r.requests.map((q) => q.headers['idempotency-key'])).toEqual(['k1', 'k2']);
    expect(r.connections).toBe(1);
  });

  it('when the receiver answers 500, then retry with the status', async () => {
    const r = await receiver(respond(500, {}, 'boom'));
    const outcome = await sender().deliver(r.url(HOOK_PATH), create, 'k');
    expect(outcome).toEqual({ kind: 'retry', status: 500, reason: 'HTTP 500' });
    expectNoSecret(outcome);
  });

  it('when the receiver answers 429 with Retry-After: 2, then retry with retryAfterMs 2000', async () => {
    const r = await receiver(respond(429, { 'retry-after': '2', 'content-type': 'application/json' }, '{"retry_after":1.7}'));
    expect(await sender().deliver(r.url(HOOK_PATH), create, 'k')).toEqual({
      kind: 'retry',
      status: 429,
      retryAfterMs: 2000,
      reason: 'HTTP 429',
    });
  });

  it('when the receiver answers 503 with an HTTP-date Retry-After, then retryAfterMs counts from the clock', async () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    const r = await receiver(respond(503, { 'retry-after': 'Tue, 01 Jan 2030 00:00:30 GMT' }));
    const outcome = await sender({ now: () => now }).deliver(r.url(HOOK_PATH), create, 'k');
    expect(outcome).toEqual({ kind: 'retry', status: 503, retryAfterMs: 30_000, reason: 'HTTP 503' });
  });

  it('when the receiver answers 408, then retry', async () => {
    const r = await receiver(respond(408));
    expect(await sender().deliver(r.url(HOOK_PATH), create, 'k')).toMatchObject({ kind: 'retry', status: 408 });
  });

  it('when the receiver answers 404 (or 400), then rejected', async () => {
    const r = await receiver((req, res) => respond(req.url?.includes('bad') ? 400 : 404)(req, res));
    const s = sender();
    const outcome = await s.deliver(r.url(HOOK_PATH), create, 'k');
    expect(outcome).toEqual({ kind: 'rejected', status: 404, reason: 'HTTP 404' });
    expectNoSecret(outcome);
    expect(await s.deliver(r.url('/bad'), create, 'k')).toEqual({ kind: 'rejected', status: 400, reason: 'HTTP 400' });
  });

  it('when the receiver answers 302, then rejected and the Location target is never requested', async () => {
    const target = await receiver(respond(204));
    const r = await receiver(respond(302, { location: target.url('/stolen') }));
    const outcome = await sender().deliver(r.url(HOOK_PATH), create, 'k');
    expect(outcome).toEqual({ kind: 'rejected', status: 302, reason: 'HTTP 302: redirects are not followed' });
    expect(r.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
    expect(target.connections).toBe(0);
  });

  it('when the receiver never answers, then retry after the request timeout', async () => {
    const r = await receiver(() => {
      /* hang: never respond */
    });
    const started = performance.now();
    const outcome = await sender({ requestTimeoutMs: 300 }).deliver(r.url(HOOK_PATH), create, 'k');
    const elapsed = performance.now() - started;
    expect(outcome).toEqual({ kind: 'retry', reason: 'timeout (UND_ERR_HEADERS_TIMEOUT)' });
    expect(r.requests).toHaveLength(1);
    // undici's headers timer has a ~0.5 s resolution: 300 ms fires after 0.3–1 s.
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(3000);
  });

  it('when the receiver sends headers then stalls the body, then still delivered on a 2xx', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial'); // never ended
    });
    expect(await sender({ requestTimeoutMs: 300 }).deliver(r.url(HOOK_PATH), create, 'k')).toEqual({ kind: 'delivered', status: 200 });
  });

  it('when nothing listens on the port, then retry as a network error', async () => {
    const r = await receiver(respond(204));
    await stop(r);
    const outcome = await sender().deliver(r.url(HOOK_PATH), create, 'k');
    expect(outcome).toEqual({ kind: 'retry', reason: 'network error (ECONNREFUSED)' });
  });
});

describe('webhook sender: SSRF guard and URL checks (allowPrivateWebhooks: false)', () => {
  it('when an http URL is sent, then it is refused before any connection', async () => {
    const r = await receiver(respond(204));
    const outcome = await sender({ allowPrivateWebhooks: false }).deliver(r.url(HOOK_PATH), create, 'k');
    expect(outcome).toEqual({ kind: 'rejected', reason: 'URL scheme must be https' });
    expect(r.connections).toBe(0);
  });

  it('when the same receiver is reached with allowPrivateWebhooks: true, then it is delivered (the control case)', async () => {
    const r = await receiver(respond(204));
    expect(await sender({ allowPrivateWebhooks: true }).deliver(r.url(HOOK_PATH), create, 'k')).toMatchObject({ kind: 'delivered' });
    expect(r.requests).toHaveLength(1);
  });

  it('when an https URL has a loopback IP literal host, then it is refused before connecting', async () => {
    const r = await receiver(respond(204));
    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '[::1]', '2130706433']) {
      const outcome = await sender({ allowPrivateWebhooks: false }).deliver(`https://${host}:${r.port}${HOOK_PATH}`, create, 'k');
      expect(outcome.kind).toBe('rejected');
      expect(outcome).toMatchObject({ reason: expect.stringMatching(/^Refusing to connect: address .* is not a public address/) });
      expectNoSecret(outcome);
    }
    expect(r.connections).toBe(0);
  });

  it('when the host is localhost, then the guarded lookup refuses it and nothing connects', async () => {
    const r = await receiver(respond(204));
    const outcome = await sender({ allowPrivateWebhooks: false }).deliver(`https://localhost:${r.port}${HOOK_PATH}`, create, 'k');
    expect(outcome).toEqual({
      kind: 'rejected',
      reason: expect.stringMatching(
        /^Refusing to connect: localhost resolves to (127\.0\.0\.1|::1), which is not a public address \(loopback\)$/,
      ),
    });
    expectNoSecret(outcome);
    expect(r.connections).toBe(0);
  });

  it('when a name resolves to a private address via the resolver, then it is refused at connect time', async () => {
    const r = await receiver(respond(204));
    const s = sender({ allowPrivateWebhooks: false, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const outcome = await s.deliver(`https://hooks.example.com:${r.port}${HOOK_PATH}`, create, 'k');
    expect(outcome).toMatchObject({ kind: 'rejected', reason: expect.stringContaining('hooks.example.com resolves to 127.0.0.1') });
    expect(r.connections).toBe(0);
  });

  it('when the URL is invalid, not http(s), or carries credentials, then rejected without echoing it', async () => {
    const s = sender({ allowPrivateWebhooks: false });
    const cases: [string, string][] = [
      [`not a url ${SECRET}`, 'invalid URL'],
      [`ftp://files.example.com/${SECRET}`, 'URL scheme must be https'],
      [`https://user:${SECRET}@hooks.example.com/x`, 'URL must not contain credentials'],
    ];
    for (const [url, reason] of cases) {
      const outcome = await s.deliver(url, create, 'k');
      expect(outcome).toEqual({ kind: 'rejected', reason });
      expectNoSecret(outcome);
    }
    expect(await sender({ allowPrivateWebhooks: true }).deliver(`ftp://files.example.com/${SECRET}`, create, 'k')).toEqual({
      kind: 'rejected',
      reason: 'URL scheme must be https or http',
    });
  });
});

describe('webhook sender: secrets and misuse', () => {
  it('when any outcome is produced, then its text never contains the URL path or secret', async () => {
    const ok = await receiver(respond(204));
    const hang = await receiver(() => {});
    const s = sender({ requestTimeoutMs: 200 });
    const outcomes = [
      await s.deliver(ok.url(HOOK_PATH), create, 'k'),
      await s.deliver(hang.url(HOOK_PATH), create, 'k'),
      await s.deliver(`http://127.0.0.1:1${HOOK_PATH}`, create, 'k'),
      await sender({ allowPrivateWebhooks: false }).deliver(`https://localhost${HOOK_PATH}`, create, 'k'),
    ];
    for (const outcome of outcomes) expectNoSecret(outcome);
  });

  it('when the idempotency key is empty or has control characters, then send throws a TypeError without the URL', async () => {
    const s = sender();
    for (const key of ['', 'a\r\nX-Evil: 1', 'k'.repeat(256)]) {
      const error = await s.deliver(`https://hooks.example.com${HOOK_PATH}`, create, key).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
      expect(String(error)).not.toContain(SECRET);
    }
  });

  it('when the sender is closed, then send throws and close is idempotent', async () => {
    const s = sender();
    await s.close();
    await s.close();
    await expect(s.deliver(`https://hooks.example.com${HOOK_PATH}`, create, 'k')).rejects.toThrow('the webhook sender is closed');
  });
});

describe('redactWebhookUrl', () => {
  it('when a webhook URL is redacted, then only scheme and host (with port) remain', () => {
    expect(redactWebhookUrl(`https://discord.example.com${HOOK_PATH}#frag`)).toBe('https://discord.example.com/…');
    expect(redactWebhookUrl(`http://user:pw@127.0.0.1:8443${HOOK_PATH}`)).toBe('http://127.0.0.1:8443/…');
    expect(redactWebhookUrl(`garbage ${SECRET}`)).toBe('(invalid URL)');
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  it('when the value is delta-seconds, then milliseconds are returned', () => {
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter(['7', '9'], now)).toBe(7000);
  });

  it('when the value is an HTTP-date, then the time until it is returned (0 when past)', () => {
    expect(parseRetryAfter('Tue, 01 Jan 2030 00:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Mon, 31 Dec 2029 23:59:00 GMT', now)).toBe(0);
  });

  it('when the value is absent or invalid, then undefined', () => {
    for (const v of [undefined, '', '-1', '1.5', 'soon', '1e3']) expect(parseRetryAfter(v, now)).toBeUndefined();
  });
});
