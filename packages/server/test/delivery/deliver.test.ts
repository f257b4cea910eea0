// The webhook sender's create, edit and delete calls against real HTTP receivers: what each call
// sends (method, path, query, headers, body), what a create learns from the answer (the created
// message's ID), and that edits and deletes get the same classification and SSRF guard as a create.
import { describe, expect, it } from 'vitest';
import type { DeliveryCall, SendOutcome } from '../../src/delivery/send.ts';
import { type Handler, receivers, respond } from './receivers.ts';

const { receiver, sender } = receivers();

const SECRET = 'S3cr3tT0k3nAbCdEfGhIjKlMnOpQrStUvWxYz0123456789';
const HOOK = `/api/webhooks/123456789012345678/${SECRET}`;
const createPayload = { content: 'Hello', username: 'Alice', allowed_mentions: { parse: [] } };
const editPayload = { content: 'Hello, edited', embeds: [], allowed_mentions: { parse: [] } };
const create: DeliveryCall = { kind: 'create', payload: createPayload };
const edit = (messageId: string): DeliveryCall => ({ kind: 'edit', messageId, payload: editPayload });
const remove = (messageId: string): DeliveryCall => ({ kind: 'delete', messageId });

const json = (status: number, body: string): Handler => respond(status, { 'content-type': 'application/json' }, body);

function expectNoSecret(outcome: SendOutcome) {
  const text = JSON.stringify(outcome);
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain('/api/webhooks');
}

describe('deliver: create', () => {
  it('when a create is delivered, then it is POSTed with wait=true and the JSON payload, and the answer id is the message ID', async () => {
    const r = await receiver(json(200, JSON.stringify({ id: 'a-1', channel_id: '9', content: 'Hello' })));
    const outcome = await sender({ userAgent: 'chatbridge-test/1' }).deliver(r.url(HOOK), create, 'ep-1:7:chat_a');
    expect(outcome).toEqual({ kind: 'delivered', status: 200, messageId: 'a-1' });
    expect(r.requests).toHaveLength(1);
    const [got] = r.requests;
    expect(got!.method).toBe('POST');
    expect(got!.url).toBe(`${HOOK}?wait=true`);
    expect(got!.headers['idempotency-key']).toBe('ep-1:7:chat_a');
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['user-agent']).toBe('chatbridge-test/1');
    expect(got!.body).toBe(JSON.stringify(createPayload));
  });

  it('when the webhook URL has a query, then wait=true is appended with & and any wait already there is replaced', async () => {
    const r = await receiver(respond(204));
    const s = sender();
    const cases: [string, string][] = [
      [`${HOOK}?thread_id=42`, `${HOOK}?thread_id=42&wait=true`],
      [`${HOOK}?`, `${HOOK}?wait=true`],
      [`${HOOK}?wait=false&thread_id=42`, `${HOOK}?thread_id=42&wait=true`],
      [`${HOOK}?wait=true`, `${HOOK}?wait=true`],
      [`${HOOK}?a=%20b&waiting=1#frag`, `${HOOK}?a=%20b&waiting=1&wait=true`],
    ];
    for (const [url] of cases) expect(await s.deliver(r.url(url), create, 'k')).toEqual({ kind: 'delivered', status: 204 });
    expect(r.requests.map((q) => q.url)).toEqual(cases.map(([, sent]) => sent));
  });

  it('when the answer id is a JSON number beyond 2^53, then the message ID is its exact digits', async () => {
    const r = await receiver(json(200, '{"id": 9007199254740993, "nested": {"id": 1}}'));
    const s = sender();
    expect(await s.deliver(r.url(HOOK), create, 'k')).toEqual({ kind: 'delivered', status: 200, messageId: '9007199254740993' });
    const snowflake = await receiver(json(200, '{"channel_id":"1","id":123456789012345678901234567890}'));
    expect(await s.deliver(snowflake.url(HOOK), create, 'k')).toMatchObject({ messageId: '123456789012345678901234567890' });
  });

  it('when the answer names no usable ID, then delivered without one', async () => {
    const answers: Handler[] = [
      json(200, JSON.stringify({ id: 'x'.repeat(101) })), // too long
      json(200, JSON.stringify({ id: 'has space' })),
      json(200, JSON.stringify({ id: 1.5 })),
      json(200, JSON.stringify([{ id: 'a-1' }])),
      json(200, JSON.stringify({ message: { id: 'a-1' } })),
      respond(200, { 'content-type': 'text/plain' }, 'ok'), // not JSON
      json(200, '{"id": "a-1"'), // cut short
      respond(204), // no body
    ];
    const s = sender();
    for (const answer of answers) {
      const r = await receiver(answer);
      const outcome = await s.deliver(r.url(HOOK), create, 'k');
      expect(outcome).toMatchObject({ kind: 'delivered' });
      expect(outcome).not.toHaveProperty('messageId');
    }
  });

  it('when the answer is exactly 64 KiB, then it is read whole and its id kept', async () => {
    const head = '{"id":"a-1","pad":"';
    const body = `${head}${'x'.repeat(64 * 1024 - head.length - 2)}"}`;
    expect(Buffer.byteLength(body)).toBe(64 * 1024);
    const r = await receiver(json(200, body));
    expect(await sender().deliver(r.url(HOOK), create, 'k')).toEqual({ kind: 'delivered', status: 200, messageId: 'a-1' });
  });

  it('when the answer is longer than 64 KiB and never ends, then reading stops there: delivered at once, without an ID', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"id":"a-1","pad":"${'x'.repeat(100 * 1024)}`); // never ended
    });
    const started = performance.now();
    const outcome = await sender({ requestTimeoutMs: 5000 }).deliver(r.url(HOOK), create, 'k');
    expect(outcome).toEqual({ kind: 'delivered', status: 200 });
    // Reading on would have waited for the 5 s body timeout.
    expect(performance.now() - started).toBeLessThan(2500);
  });

  it('when the answer says the rate limit is used up, then delivered with both the hold and the message ID', async () => {
    const r = await receiver(
      respond(200, { 'content-type': 'application/json', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset-after': '1.5' }, '{"id":"a-1"}'),
    );
    expect(await sender().deliver(r.url(HOOK), create, 'k')).toEqual({ kind: 'delivered', status: 200, holdMs: 1500, messageId: 'a-1' });
  });

  it('when a create is answered 404 or 429, then rejected or retried as a send is', async () => {
    const gone = await receiver(respond(404));
    const s = sender();
    expect(await s.deliver(gone.url(HOOK), create, 'k')).toEqual({ kind: 'rejected', status: 404, reason: 'HTTP 404' });
    const busy = await receiver(respond(429, { 'retry-after': '3' }));
    expect(await s.deliver(busy.url(HOOK), create, 'k')).toEqual({ kind: 'retry', status: 429, retryAfterMs: 3000, reason: 'HTTP 429' });
  });
});

describe('deliver: edit and delete', () => {
  it("when an edit is delivered, then it is PATCHed to the copy's URL with the JSON payload, the query kept", async () => {
    const r = await receiver(json(200, JSON.stringify({ id: 'a-1', content: 'Hello, edited' })));
    const outcome = await sender().deliver(r.url(`${HOOK}?thread_id=42`), edit('a-1'), 'ep-1:7:chat_a:edit:1');
    // An edit's answer is not read: the copy's ID is already known.
    expect(outcome).toEqual({ kind: 'delivered', status: 200 });
    const [got] = r.requests;
    expect(got!.method).toBe('PATCH');
    expect(got!.url).toBe(`${HOOK}/messages/a-1?thread_id=42`);
    expect(got!.headers['idempotency-key']).toBe('ep-1:7:chat_a:edit:1');
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.body).toBe(JSON.stringify(editPayload));
  });

  it('when a delete is delivered, then DELETE goes to the same URL without a body or Content-Type', async () => {
    const r = await receiver(respond(204));
    expect(await sender().deliver(r.url(HOOK), remove('123456789012345678'), 'k-del')).toEqual({ kind: 'delivered', status: 204 });
    const [got] = r.requests;
    expect(got!.method).toBe('DELETE');
    expect(got!.url).toBe(`${HOOK}/messages/123456789012345678`);
    expect(got!.headers['idempotency-key']).toBe('k-del');
    expect(got!.headers).not.toHaveProperty('content-type');
    expect(got!.body).toBe('');
  });

  it('when the message ID has characters a path reserves, then it is percent-encoded; a trailing slash of the webhook path is not doubled', async () => {
    const r = await receiver(respond(204));
    const s = sender();
    await s.deliver(r.url(`${HOOK}/?thread_id=1`), edit('a/b?c#d%2e'), 'k');
    await s.deliver(r.url(HOOK), remove('..a'), 'k');
    expect(r.requests.map((q) => q.url)).toEqual([`${HOOK}/messages/a%2Fb%3Fc%23d%252e?thread_id=1`, `${HOOK}/messages/..a`]);
  });

  it('when the message ID is not usable, or "." or ".." (which would name the webhook itself), then rejected before connecting', async () => {
    const r = await receiver(respond(204));
    const s = sender();
    for (const id of ['', '.', '..', 'has space', 'x'.repeat(101), 'tab\t', 'ünï']) {
      for (const call of [edit(id), remove(id)]) {
        expect(await s.deliver(r.url(HOOK), call, 'k')).toEqual({ kind: 'rejected', reason: 'not a usable message ID' });
      }
    }
    expect(r.connections).toBe(0);
  });

  it('when an edit or delete is answered 404, then delivered: the copy is gone and there is nothing left to do', async () => {
    const r = await receiver(json(404, '{"message": "Unknown Message", "code": 10008}'));
    const s = sender();
    expect(await s.deliver(r.url(HOOK), edit('a-1'), 'k')).toEqual({ kind: 'delivered', status: 404 });
    expect(await s.deliver(r.url(HOOK), remove('a-1'), 'k')).toEqual({ kind: 'delivered', status: 404 });
    const limited = await receiver(respond(404, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset-after': '2' }));
    expect(await s.deliver(limited.url(HOOK), remove('a-1'), 'k')).toEqual({ kind: 'delivered', status: 404, holdMs: 2000 });
  });

  it('when an edit is answered 429 with Retry-After, then retry with retryAfterMs; a delete answered 503 is retried too', async () => {
    const r = await receiver(json(429, '{"retry_after": 1.2}'));
    const busy = await receiver(respond(429, { 'retry-after': '2', 'content-type': 'application/json' }, '{"retry_after": 1.7}'));
    const s = sender();
    expect(await s.deliver(busy.url(HOOK), edit('a-1'), 'k')).toEqual({
      kind: 'retry',
      status: 429,
      retryAfterMs: 2000,
      reason: 'HTTP 429',
    });
    expect(await s.deliver(r.url(HOOK), edit('a-1'), 'k')).toEqual({ kind: 'retry', status: 429, reason: 'HTTP 429' });
    const down = await receiver(respond(503));
    expect(await s.deliver(down.url(HOOK), remove('a-1'), 'k')).toEqual({ kind: 'retry', status: 503, reason: 'HTTP 503' });
  });

  it('when an edit or delete is answered 400 or 302, then rejected, and the Location target is never requested', async () => {
    const target = await receiver(respond(204));
    const moved = await receiver(respond(302, { location: target.url('/stolen') }));
    const bad = await receiver(respond(400));
    const s = sender();
    expect(await s.deliver(bad.url(HOOK), edit('a-1'), 'k')).toEqual({ kind: 'rejected', status: 400, reason: 'HTTP 400' });
    for (const call of [edit('a-1'), remove('a-1')]) {
      expect(await s.deliver(moved.url(HOOK), call, 'k')).toEqual({
        kind: 'rejected',
        status: 302,
        reason: 'HTTP 302: redirects are not followed',
      });
    }
    expect(target.connections).toBe(0);
  });

  it('when an edit never gets an answer, then retry after the request timeout', async () => {
    const r = await receiver(() => {
      /* hang: never respond */
    });
    expect(await sender({ requestTimeoutMs: 300 }).deliver(r.url(HOOK), edit('a-1'), 'k')).toEqual({
      kind: 'retry',
      reason: 'timeout (UND_ERR_HEADERS_TIMEOUT)',
    });
  });
});

describe('deliver: SSRF guard and URL checks (allowPrivateWebhooks: false)', () => {
  it('when an edit or delete goes to an http URL, a loopback literal, localhost or a name resolving to a private address, then it is refused and nothing connects', async () => {
    const r = await receiver(respond(204));
    const strict = sender({ allowPrivateWebhooks: false });
    const resolvesPrivate = sender({ allowPrivateWebhooks: false, resolve: async () => [{ address: '10.0.0.7', family: 4 }] });
    for (const call of [edit('a-1'), remove('a-1'), create]) {
      expect(await strict.deliver(r.url(HOOK), call, 'k')).toEqual({ kind: 'rejected', reason: 'URL scheme must be https' });
      const literal = await strict.deliver(`https://127.0.0.1:${r.port}${HOOK}`, call, 'k');
      expect(literal).toMatchObject({
        kind: 'rejected',
        reason: expect.stringMatching(/^Refusing to connect: address 127\.0\.0\.1 is not a public address/),
      });
      const local = await strict.deliver(`https://localhost:${r.port}${HOOK}`, call, 'k');
      expect(local).toMatchObject({ kind: 'rejected', reason: expect.stringContaining('localhost resolves to') });
      const named = await resolvesPrivate.deliver(`https://hooks.example.com:${r.port}${HOOK}`, call, 'k');
      expect(named).toMatchObject({ kind: 'rejected', reason: expect.stringContaining('hooks.example.com resolves to 10.0.0.7') });
      for (const outcome of [literal, local, named]) expectNoSecret(outcome);
    }
    expect(r.connections).toBe(0);
  });

  it('when the URL carries credentials or does not parse, then an edit is rejected without echoing it', async () => {
    const s = sender({ allowPrivateWebhooks: false });
    const cases: [string, string][] = [
      [`https://user:${SECRET}@hooks.example.com/x`, 'URL must not contain credentials'],
      [`not a url ${SECRET}`, 'invalid URL'],
    ];
    for (const [url, reason] of cases) {
      const outcome = await s.deliver(url, edit('a-1'), 'k');
      expect(outcome).toEqual({ kind: 'rejected', reason });
      expectNoSecret(outcome);
    }
  });
});

describe('deliver: misuse', () => {
  it('when the idempotency key is invalid, the call kind unknown or the sender closed, then deliver throws', async () => {
    const s = sender();
    const url = `https://hooks.example.com${HOOK}`;
    await expect(s.deliver(url, edit('a-1'), 'a\r\nX-Evil: 1')).rejects.toThrow(TypeError);
    await expect(s.deliver(url, { kind: 'move' } as unknown as DeliveryCall, 'k')).rejects.toThrow(
      'call.kind must be create, edit or delete',
    );
    await s.close();
    await expect(s.deliver(url, create, 'k')).rejects.toThrow('the webhook sender is closed');
  });
});
