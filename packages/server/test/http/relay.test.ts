// Built-in bridging for self-user endpoints, through the real service and real local receivers.
// The service runs on a clock the test moves: retry times and TTLs are instants on it, kept in the
// store, so a test moves the clock past one and wakes the relay instead of waiting for it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ChatbridgeClient, createChatbridgeClient } from '@chatbridge/client';
import { BACKOFF } from '../../src/delivery/backoff.ts';
import { initialRecord } from '../../src/domain/record.ts';
import { SqliteEndpointStore } from '../../src/store/sqlite/store.ts';
import { startTestServer, type TestServer, type TestServerOptions } from '../../src/testing.ts';
import { eventually, type Receiver, startReceiver } from './receiver.ts';
import { failure } from './harness.ts';

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

let counter = 0;
const running: TestServer[] = [];
let now = 0;
beforeEach(() => {
  now = Date.now();
});
afterEach(async () => {
  receiver.release();
  await Promise.all(running.splice(0).map((s) => s.close().catch(() => undefined)));
  // Every payload any test here delivered must be what the spec's webhooks section declares.
  const offSpec = receiver.received.flatMap((r) => r.violations.map((v) => `${r.path}: ${v}`));
  receiver.received.length = 0;
  expect(offSpec).toEqual([]);
  receiver.script();
});

async function start(options: TestServerOptions = {}) {
  const server = await startTestServer({ allowPrivateWebhooks: true, clock: () => now, ...options });
  running.push(server);
  return { server, client: createChatbridgeClient({ baseUrl: server.url }) };
}

/** Moves the service's clock on and wakes its relay. */
function advance(server: TestServer, ms: number) {
  now += ms;
  server.relay.wake();
}

/** Runs a relay pass at the clock's time and waits for what it started: whatever is due is done. */
async function passAndSettle(server: TestServer) {
  await server.relay.pass();
  await server.relay.settled();
}

/** A self-user endpoint with two bridges: index 0 and 1 across chat_a, chat_b (webhooks) and chat_c. */
async function community(client: ChatbridgeClient, server: TestServer, id = `relay-${++counter}`) {
  const token = await server.provision(id);
  for (const i of [0, 1]) {
    await client.updateEndpoint(id, token, {
      channel_chat_a: `a-000${i}-chan`,
      webhook_chat_a: receiver.url(`a${i}`),
      channel_chat_b: `b-000${i}-chan`,
      webhook_chat_b: receiver.url(`b${i}`),
      channel_chat_c: `c-000${i}-chan`,
    });
  }
  await client.updateEndpoint(id, token, { selfuse: true });
  return { id, token };
}

const post = (client: ChatbridgeClient, id: string, token: string, sender: 'chat_a' | 'chat_b' | 'chat_c', bridge: number) =>
  client.updateEndpoint(id, token, {
    sender,
    sender_channel: `${sender.slice(-1)}-000${bridge}-chan`,
    message_author_name: 'Ada',
    message_content: `hello over bridge ${bridge}`,
    trigger: true,
  });

describe('relay: delivery', () => {
  it('when chat_c posts on bridge 1, then both webhook platforms get it at their index-1 webhook, and the record returns to idle', async () => {
    const { server, client } = await start();
    const { id, token } = await community(client, server);
    const pending = await post(client, id, token, 'chat_c', 1);
    expect(pending.meta.read).toEqual({ chat_a: false, chat_b: false, chat_c: true, chat_d: true });

    await eventually(async () => (await client.getEndpoint(id, token)).meta.trigger === false);
    expect(receiver.received.map((r) => r.path.split('/')[2]).sort()).toEqual(['a1', 'b1']);
    expect(receiver.received[0]!.body).toMatchObject({ content: 'hello over bridge 1', username: 'Ada', allowed_mentions: { parse: [] } });
    expect(new Set(receiver.received.map((r) => r.idempotencyKey)).size).toBe(2);
    expect(await client.getEndpoint(id, token)).toMatchObject({ meta: initialRecord().meta });
    expect(await server.store.deliveries.count()).toBe(0);
  });

  it("when a reply with attachments, an avatar and an embed at their limits is delivered, then every payload is the spec's webhook payload", async () => {
    const { server, client } = await start();
    const { id, token } = await community(client, server);
    const fields = Array.from({ length: 28 }, (_, i) => ({ name: `f${i}`, value: i === 0 ? '' : 'v', inline: i % 2 === 0 }));
    await client.updateEndpoint(id, token, {
      sender: 'chat_c',
      sender_channel: 'c-0000-chan',
      message_author_name: 'Ada',
      message_author_avatar: 'https://cdn.chat-c.example.com/avatars/123456789/abcdef0123456789.png',
      message_content: 'x'.repeat(1500),
      message_attachments: 'https://cdn.chat-c.example.com/files/a.png,https://cdn.chat-c.example.com/files/b.png',
      message_embed: JSON.stringify({ title: 'Release', description: '', image: 'not a url', fields }),
      message_reply: true,
      message_reply_author: 'Grace Hopper',
      message_reply_message: 'line one\nline two '.repeat(60),
      trigger: true,
    });
    await eventually(() => receiver.received.length === 2);
    expect(receiver.received.map((r) => r.violations)).toEqual([[], []]);
    expect(receiver.received[0]!.body).toMatchObject({ username: 'Ada', embeds: [{ title: 'Release' }], allowed_mentions: { parse: [] } });
    expect((receiver.received[0]!.body.content as string).length).toBe(2000);
  });

  it('when chat_b posts, then only chat_a is delivered to; chat_b is the sender', async () => {
    const { server, client } = await start();
    const { id, token } = await community(client, server);
    await client.updateEndpoint(id, token, {
      sender: 'chat_b',
      sender_channel: 'b-0000-chan',
      message_content: 'from b',
      trigger: true,
    });
    await eventually(() => receiver.received.length === 1);
    expect(receiver.received[0]!.path).toContain('/hooks/a0/');
    // chat_c has channels and no webhook: its bot still has to read it.
    const record = await client.getEndpoint(id, token);
    expect(record.meta.read).toEqual({ chat_a: true, chat_b: true, chat_c: false, chat_d: true });
  });

  it('when self-user is off, then nothing is delivered', async () => {
    const { server, client } = await start();
    const { id, token } = await community(client, server);
    await client.updateEndpoint(id, token, { selfuse: false });
    await post(client, id, token, 'chat_c', 0);
    await passAndSettle(server);
    expect(receiver.received).toEqual([]);
    expect(await server.store.deliveries.count()).toBe(0);
  });

  it('when a webhook answers 500 then 200, then it is retried and delivered once', async () => {
    const { server, client } = await start();
    const { id, token } = await community(client, server);
    receiver.script({ status: 500 }, { status: 500 });
    await post(client, id, token, 'chat_c', 0);
    await eventually(() => server.relay.stats.retried === 2);
    advance(server, BACKOFF.baseMs); // past the first retry's delay, jittered below it
    await eventually(async () => (await client.getEndpoint(id, token)).meta.trigger === false);
    // Both first attempts failed; each target then succeeded on its retry, with the same key.
    expect(receiver.received.length).toBe(4);
    expect(new Set(receiver.received.map((r) => r.idempotencyKey)).size).toBe(2);
    expect(server.relay.stats).toMatchObject({ delivered: 2, retried: 2 });
  });

  it('when a webhook answers 429 with Retry-After: 1, then the retry waits at least a second', async () => {
    const { server, client } = await start();
    const { id, token } = await community(client, server);
    await client.updateEndpoint(id, token, { index: 0, webhook_chat_b: receiver.url('b-zero') });
    receiver.script({ status: 429, headers: { 'retry-after': '1' } });
    await client.updateEndpoint(id, token, {
      sender: 'chat_a',
      sender_channel: 'a-0000-chan',
      message_content: 'rate limited',
      trigger: true,
    });
    await eventually(() => server.relay.stats.retried === 1);
    advance(server, 999);
    await passAndSettle(server);
    expect(receiver.received).toHaveLength(1);
    advance(server, 1);
    await eventually(() => receiver.received.length === 2);
    const [first, second] = receiver.received;
    expect(second!.idempotencyKey).toBe(first!.idempotencyKey);
    // The receiver records the POST before it answers; the relay counts it once the answer is back.
    await eventually(() => server.relay.stats.delivered > 0);
    expect(server.relay.stats.delivered).toBe(1);
  });

  it("when a webhook answers 404, then it is not retried and that platform's copy is given up (expired, not read)", async () => {
    const { server, client } = await start();
    const { id, token } = await community(client, server);
    await client.updateEndpoint(id, token, { index: 0, webhook_chat_b: receiver.url('b-zero') });
    receiver.script({ status: 404 });
    await client.updateEndpoint(id, token, { sender: 'chat_a', sender_channel: 'a-0000-chan', message_content: 'refused', trigger: true });
    await eventually(() => server.relay.stats.rejected === 1);
    advance(server, BACKOFF.capMs); // past any retry
    await passAndSettle(server);
    expect(receiver.received).toHaveLength(1);
    // chat_c's bot has still to read it; chat_b will not get it.
    expect((await client.getEndpoint(id, token)).meta.read).toMatchObject({ chat_b: true, chat_c: false });
    expect(await server.store.messages.get(id, 1)).toMatchObject({ unread: 4, expired: 2 });
    expect(await server.store.deliveries.count()).toBe(0);
  });
});

describe('relay: idempotency keys', () => {
  it('when an endpoint ID is deleted and created anew, then its first message carries keys the old first message never had', async () => {
    const { server, client } = await start();
    const first = await community(client, server);
    await post(client, first.id, first.token, 'chat_c', 0);
    await eventually(async () => (await client.getEndpoint(first.id, first.token)).meta.trigger === false);
    const oldKeys = receiver.received.map((r) => r.idempotencyKey);
    expect(await server.store.endpoints.delete(first.id)).toBe(true);
    const again = await community(client, server, first.id);
    await post(client, again.id, again.token, 'chat_c', 0);
    await eventually(() => receiver.received.length === 4);
    const newKeys = receiver.received.slice(2).map((r) => r.idempotencyKey);
    // Both first messages are message 1 of their endpoint, to the same platforms.
    expect(oldKeys.map((k) => k!.split(':').slice(0, 3).join(':')).sort()).toEqual(
      newKeys.map((k) => k!.split(':').slice(0, 3).join(':')).sort(),
    );
    expect(newKeys.filter((k) => oldKeys.includes(k))).toEqual([]);
  });
});

describe('relay: slow webhooks', () => {
  it("when one endpoint's webhooks answer slowly, then another endpoint's message is delivered and a third's expires on time", async () => {
    const { server, client } = await start({ messageTtlMs: 1500 });
    const slow = await community(client, server);
    const fast = await community(client, server);
    const expiring = await community(client, server);
    await client.updateEndpoint(expiring.id, expiring.token, { selfuse: false }); // nothing delivers it: only the TTL ends it
    receiver.script({ status: 204, hold: true }, { status: 204, hold: true });
    await post(client, slow.id, slow.token, 'chat_c', 0);
    await eventually(() => receiver.received.length === 2); // both held by the receiver
    await post(client, expiring.id, expiring.token, 'chat_c', 0);
    await post(client, fast.id, fast.token, 'chat_c', 1);
    await eventually(async () => (await client.getEndpoint(fast.id, fast.token)).meta.trigger === false);
    advance(server, 1501); // past the TTL of 1.5 s
    await eventually(async () => (await client.getEndpoint(expiring.id, expiring.token)).meta.trigger === false);
    expect(server.relay.stats.delivered).toBe(2); // the fast endpoint's two; the slow ones are still under way
  });
});

describe('relay: lanes per platform', () => {
  it("when chat_a's delivery slots are all held by a hanging webhook, then chat_b's deliveries still go out at once", async () => {
    const { server, client } = await start({ relay: { maxInFlight: 1 } });
    const hanging = await community(client, server);
    const other = await community(client, server);
    receiver.script({ status: 204, hold: true });
    // From chat_b: only chat_a is delivered to, and its webhook holds the request.
    await post(client, hanging.id, hanging.token, 'chat_b', 0);
    await eventually(() => receiver.received.length === 1);
    // From chat_a: only chat_b is delivered to, while chat_a's only slot is still held.
    await post(client, other.id, other.token, 'chat_a', 0);
    await eventually(async () => (await client.getEndpoint(other.id, other.token)).meta.read.chat_b);
    expect(receiver.received.map((r) => r.path.split('/')[2])).toEqual(['a0', 'b0']);
    expect(server.relay.stats.delivered).toBe(1); // chat_b's; chat_a's is still held
  });
});

describe('relay: a retry checks that it still applies, and sends the message as posted', () => {
  /** A community whose chat_b message to chat_a got a 503 (retry in 1 s): its retry is pending. */
  async function retryPending(content: string) {
    const { server, client } = await start();
    const { id, token } = await community(client, server);
    receiver.script({ status: 503, headers: { 'retry-after': '1' } });
    const pending = await client.updateEndpoint(id, token, {
      sender: 'chat_b',
      sender_channel: 'b-0000-chan',
      message_content: content,
      trigger: true,
    });
    await eventually(() => server.relay.stats.retried === 1);
    return { server, client, id, token, pending };
  }

  it('when the webhook is replaced while a delivery waits for its retry, then neither the old nor the new webhook gets the retry', async () => {
    const { server, client, id, token } = await retryPending('moved');
    await client.updateEndpoint(id, token, { index: 0, webhook_chat_a: receiver.url('a0-new') });
    advance(server, 1000);
    await eventually(() => server.relay.stats.superseded === 1);
    expect(receiver.received.map((r) => r.path.split('/')[2])).toEqual(['a0']);
    expect(await server.store.deliveries.count()).toBe(0);
  });

  it("when the bot edits the pending message's channel or text while a retry waits, then the retry carries the message as posted to its own bridge", async () => {
    const { server, client, id, token } = await retryPending('first');
    // No trigger: the pending message's fields change, as when a bot prepares its next message.
    await client.updateEndpoint(id, token, { sender_channel: 'b-0001-chan', message_content: 'second' });
    advance(server, 1000);
    await eventually(() => receiver.received.length === 2);
    expect(receiver.received.map((r) => [r.path.split('/')[2], r.body.content])).toEqual([
      ['a0', 'first'],
      ['a0', 'first'],
    ]);
    expect(receiver.received[1]!.idempotencyKey).toBe(receiver.received[0]!.idempotencyKey);
    await eventually(() => server.relay.stats.delivered === 1);
  });

  it('when selfuse is turned off while a delivery waits for its retry, then it is dropped unsent', async () => {
    const { server, client, id, token } = await retryPending('withdrawn');
    await client.updateEndpoint(id, token, { selfuse: false });
    advance(server, 1000);
    await eventually(() => server.relay.stats.superseded === 1);
    expect(await server.store.deliveries.count()).toBe(0);
    expect(receiver.received).toHaveLength(1);
    expect((await client.getEndpoint(id, token)).meta.read.chat_a).toBe(false); // not delivered, so not read
  });

  it("when the platform's bot reads the message while its delivery waits for a retry, then the delivery is dropped with the read, unsent", async () => {
    const { server, client, id, token, pending } = await retryPending('read by hand');
    expect(pending.meta.trigger).toBe(true);
    expect(await server.store.deliveries.count()).toBe(1);
    await client.markRead(id, token, 'chat_a');
    // The read settles the message for chat_a: its delivery goes in the same write.
    expect(await server.store.deliveries.count()).toBe(0);
    advance(server, 1000);
    await passAndSettle(server);
    expect(receiver.received).toHaveLength(1);
    expect(server.relay.stats.delivered).toBe(0);
  });
});

describe('relay: lifecycle', () => {
  it('when a pending message is not fully read within the TTL, then it is reset and counted', async () => {
    const { server, client } = await start({ messageTtlMs: 400 });
    const { id, token } = await community(client, server);
    await client.updateEndpoint(id, token, { selfuse: false });
    const pending = await post(client, id, token, 'chat_c', 0);
    expect(pending.meta.trigger).toBe(true);
    advance(server, 401);
    const idle = await eventually(async () => {
      const r = await client.getEndpoint(id, token);
      return r.meta.trigger === false && r;
    });
    expect(idle.meta).toEqual(initialRecord().meta);
    expect(server.relay.stats.expired).toBe(1);
  });

  it('when a new message arrives while an older one waits for its retry, then neither replaces the other: each webhook gets both, in order', async () => {
    const { server, client } = await start();
    const { id, token } = await community(client, server);
    // Both webhooks fail the first message's first attempt.
    receiver.script({ status: 503, headers: { 'retry-after': '2' } }, { status: 503, headers: { 'retry-after': '2' } });
    await post(client, id, token, 'chat_c', 0);
    await eventually(() => server.relay.stats.retried === 2);
    await client.updateEndpoint(id, token, {
      sender: 'chat_c',
      sender_channel: 'c-0000-chan',
      message_content: 'the next one',
      trigger: true,
    });
    // The newer message waits behind the older one on each webhook; the record shows the older first.
    await passAndSettle(server);
    expect(receiver.received).toHaveLength(2);
    expect((await client.getEndpoint(id, token)).meta.message.content).toBe('hello over bridge 0');
    advance(server, 2000); // the first message's retries are due
    await eventually(async () => (await client.getEndpoint(id, token)).meta.trigger === false);
    const to = (hook: string) => receiver.received.filter((r) => r.path.split('/')[2] === hook).map((r) => r.body.content);
    for (const hook of ['a0', 'b0']) expect(to(hook)).toEqual(['hello over bridge 0', 'hello over bridge 0', 'the next one']);
    expect(server.relay.stats).toMatchObject({ delivered: 4, retried: 2, superseded: 0 });
  });
});

describe('relay: restarts', () => {
  it('when the service restarts during a delivery, then the delivery is neither lost nor repeated', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'chatbridge-restart-')), 'store.sqlite');
    const first = await start({ store: new SqliteEndpointStore(file) });
    const { id, token } = await community(first.client, first.server);
    await first.client.updateEndpoint(id, token, { index: 0, webhook_chat_b: receiver.url('b-zero-slow') });
    receiver.script({ status: 200, delayMs: 300 });
    await first.client.updateEndpoint(id, token, {
      sender: 'chat_a',
      sender_channel: 'a-0000-chan',
      message_content: 'slow',
      trigger: true,
    });
    await eventually(() => receiver.received.length === 1);
    // Graceful restart while the receiver still holds the request: in-flight deliveries finish first.
    await first.server.close();
    running.splice(running.indexOf(first.server), 1);

    const second = await start({ store: new SqliteEndpointStore(file) });
    advance(second.server, 30_000); // past any lease
    await passAndSettle(second.server);
    expect(receiver.received).toHaveLength(1);
    // Acknowledged before the stop: chat_b is marked read; chat_c (no webhook) is still its bot's to read.
    expect((await second.client.getEndpoint(id, token)).meta.read).toMatchObject({ chat_a: true, chat_b: true, chat_c: false });
    expect(await second.server.store.deliveries.count()).toBe(0);
  });

  it('when a stop finds a delivery still waiting for its webhook, then it is cut short after the grace, released, and the next start sends it again with the same key', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'chatbridge-restart-')), 'store.sqlite');
    const first = await start({ store: new SqliteEndpointStore(file), relay: { stopGraceMs: 300 } });
    const { id, token } = await community(first.client, first.server);
    await first.client.updateEndpoint(id, token, { index: 0, webhook_chat_b: receiver.url('b-zero-hangs') });
    receiver.script({ status: 200, hold: true }); // a webhook that does not answer
    await first.client.updateEndpoint(id, token, {
      sender: 'chat_a',
      sender_channel: 'a-0000-chan',
      message_content: 'hanging',
      trigger: true,
    });
    await eventually(() => receiver.received.length === 1);
    const stopping = Date.now();
    await first.server.close();
    running.splice(running.indexOf(first.server), 1);
    expect(Date.now() - stopping).toBeLessThan(3_000); // not the attempt's 20 s

    const second = await start({ store: new SqliteEndpointStore(file) });
    await eventually(async () => (await second.client.getEndpoint(id, token)).meta.read.chat_b === true);
    expect(receiver.received.map((r) => r.idempotencyKey)).toEqual([
      receiver.received[0]!.idempotencyKey,
      receiver.received[0]!.idempotencyKey,
    ]);
  });

  it('when a delivery was queued but not attempted before a stop, then the next start delivers it', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'chatbridge-restart-')), 'store.sqlite');
    const first = await start({ store: new SqliteEndpointStore(file), relay: { pollMs: 60_000 } });
    const { id, token } = await community(first.client, first.server);
    await first.server.relay.stop(); // the relay is down; the outbox keeps the work
    await post(first.client, id, token, 'chat_c', 0);
    expect(await first.server.store.deliveries.count()).toBe(2);
    await first.server.close();
    running.splice(running.indexOf(first.server), 1);

    const second = await start({ store: new SqliteEndpointStore(file) });
    await eventually(async () => (await second.client.getEndpoint(id, token)).meta.trigger === false);
    expect(receiver.received).toHaveLength(2);
  });
});

describe('relay: SSRF protection (private destinations not allowed)', () => {
  it('when webhooks point at loopback, then a literal is refused when set, and a name resolving to it is rejected at delivery with nothing sent', async () => {
    const { server, client } = await start({ allowPrivateWebhooks: false });
    const id = 'ssrf-1';
    const token = await server.provision(id);
    const port = new URL(receiver.url('x')).port;
    const literal = await failure(
      client.updateEndpoint(id, token, { webhook_chat_a: `https://127.0.0.1:${port}/hooks/loopback/${'x'.repeat(30)}` }),
    );
    expect(literal.status).toBe(400);
    expect(literal.problem.errors).toEqual([
      expect.objectContaining({ parameter: 'webhook_chat_a', message: expect.stringContaining('non-public address') }),
    ]);
    await client.updateEndpoint(id, token, {
      selfuse: true,
      channel_chat_b: 'b-0000-chan',
      webhook_chat_b: `https://localhost:${port}/hooks/by-name/${'x'.repeat(30)}`,
      channel_chat_c: 'c-0000-chan',
    });
    await post(client, id, token, 'chat_c', 0);
    await eventually(() => server.relay.stats.rejected === 1);
    expect(receiver.received).toEqual([]);
  });
});
