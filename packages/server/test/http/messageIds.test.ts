// Conversations across platforms, end to end through real HTTP on both stores: a chat_c message with
// ID c-1 reaches chat_a by `selfuse` (the webhook answers the create with its copy's ID, a-1) and chat_d
// by a bot that reports d-1; any copy's ID finds the message; an edit and a delete made on chat_c reach
// the chat_a copy through the webhook and chat_d's stream naming d-1; a chat_d reply to d-1 reaches
// chat_a as a reply to a-1 and chat_c's stream naming c-1. The map survives a restart (SQLite) and is
// shared with a second instance (PostgreSQL).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createChatbridgeClient } from '@chatbridge/client';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Platform } from '../../src/domain/record.ts';
import { PostgresEndpointStore } from '../../src/store/postgres/store.ts';
import { SqliteEndpointStore } from '../../src/store/sqlite/store.ts';
import { startTestServer, type TestServer } from '../../src/testing.ts';
import { createLogger } from '../../src/logger.ts';
import { openSse, type SseBlock, type SseReader } from '../sseBlocks.ts';
import { createScratchDatabase, type ScratchDatabase } from '../store/pgScratch.ts';
import { eventually } from './receiver.ts';

/** Waits until `assertion` passes (it is run once more at the end, so a timeout shows what differed). */
async function settles(assertion: () => unknown | Promise<unknown>): Promise<void> {
  await eventually(async () => {
    try {
      await assertion();
      return true;
    } catch {
      return false;
    }
  }).catch(() => undefined);
  await assertion();
}

const BASE_URL = process.env.DATABASE_URL;

interface Call {
  method: string;
  path: string;
  wait: boolean;
  body: Record<string, unknown> | undefined;
}

/** A chat webhook: answers a create asked to wait with the copy's ID (a-1, a-2, ...), and takes edits and deletes. */
interface ChatWebhook {
  url: string;
  calls: Call[];
  /** Holds every create until released. */
  holdCreates: boolean;
  release(): void;
  close(): Promise<void>;
}

async function startChatWebhook(): Promise<ChatWebhook> {
  let created = 0;
  const held: (() => void)[] = [];
  const hook = { calls: [] as Call[], holdCreates: false } as ChatWebhook;
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://localhost');
    const call = {
      method: req.method ?? '',
      path: url.pathname,
      wait: url.searchParams.get('wait') === 'true',
      body: text ? JSON.parse(text) : undefined,
    };
    if (call.method === 'POST' && hook.holdCreates) await new Promise<void>((resolve) => held.push(resolve));
    hook.calls.push(call);
    if (call.method === 'POST') {
      created++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(call.wait ? JSON.stringify({ id: `a-${created}`, content: 'x' }) : '');
    } else res.writeHead(call.method === 'DELETE' ? 204 : 200).end(call.method === 'DELETE' ? undefined : '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hook.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/webhooks/1234/${'t'.repeat(40)}`;
  hook.release = () => {
    hook.holdCreates = false;
    for (const r of held.splice(0)) r();
  };
  hook.close = () =>
    new Promise((resolve) => {
      hook.release();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return hook;
}

interface Backend {
  /** Opens a store on the backend's database (a new one per call, on the same data). */
  open(): Promise<SqliteEndpointStore | PostgresEndpointStore>;
  drop(): Promise<void>;
}

const backends: [string, () => Promise<Backend>][] = [
  [
    'sqlite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'chatbridge-ids-'));
      return {
        open: async () => new SqliteEndpointStore(join(dir, 'store.sqlite')),
        drop: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  ],
];
if (BASE_URL) {
  backends.push([
    'postgres',
    async () => {
      const db: ScratchDatabase = await createScratchDatabase(BASE_URL);
      return { open: () => PostgresEndpointStore.open({ connectionString: db.url }), drop: () => db.drop() };
    },
  ]);
}

const servers: TestServer[] = [];
const streams: SseReader[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await Promise.all(servers.splice(0).map((s) => s.close().catch(() => undefined)));
});

describe.each(backends)('message IDs across platforms (%s)', (kind, makeBackend) => {
  let backend: Backend;
  let hook: ChatWebhook;
  afterAll(async () => {
    await hook?.close();
    await backend?.drop();
  });

  const start = async () => {
    const server = await startTestServer({
      store: await backend.open(),
      allowPrivateWebhooks: true,
      messageTtlMs: 60_000,
      ...(process.env.IDS_DEBUG && { logger: createLogger('info') }),
    });
    servers.push(server);
    return server;
  };
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const call = async (server: TestServer, method: string, path: string, query: Record<string, string | number | boolean>, key: string) => {
    const q = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
    const res = await fetch(`${server.url}${path}?${q}`, { method, headers: key === '' ? {} : bearer(key) });
    return { status: res.status, body: (await res.json()) as Record<string, any>, number: res.headers.get('chatbridge-message-number') };
  };
  /** Reads blocks until one passes `done`; fails after 10 s. */
  const readUntil = async (stream: SseReader, done: (block: SseBlock) => boolean): Promise<SseBlock> => {
    for (;;) {
      const block = await stream.next(10_000);
      if (!block) throw new Error('the stream ended');
      if (done(block)) return block;
    }
  };

  it('when copies report their IDs, then an edit, a delete and a reply made on one platform reach every other by its own ID', async () => {
    backend = await makeBackend();
    hook = await startChatWebhook();
    let server = await start();
    const admin = createChatbridgeClient({ baseUrl: server.url, adminToken: server.adminToken });
    const keys = {} as Record<Platform, string>;
    for (const p of ['chat_b', 'chat_c', 'chat_d'] as const) keys[p] = (await admin.createBot(`ids-${p}`, p)).key;
    const id = 'conversation';
    const token = await server.provision(id);
    const channels = { chat_a: 'a-room-0001', chat_c: 'c-room-0001', chat_d: 'd-room-0001' };
    const setup = {
      token,
      ...Object.fromEntries(Object.entries(channels).map(([p, c]) => [`channel_${p}`, c])),
      webhook_chat_a: hook.url,
      selfuse: true,
    };
    expect((await call(server, 'POST', `/update/${id}`, setup, '')).status).toBe(200);

    const dStream = await openSse(`${server.url}/events/${id}`, bearer(keys.chat_d));
    const cStream = await openSse(`${server.url}/events/${id}`, bearer(keys.chat_c));
    streams.push(dStream, cStream);
    await dStream.next();
    await cStream.next();

    // chat_c sends c-1: the webhook creates a-1; chat_d's bot relays it and reports d-1.
    const sent = await call(
      server,
      'POST',
      `/update/${id}`,
      { sender: 'chat_c', sender_channel: channels.chat_c, message_content: 'hello', trigger: true, message_id: 'c-1' },
      keys.chat_c,
    );
    expect(sent.status).toBe(200);
    expect(sent.number).toBe('1');
    await readUntil(dStream, (b) => b.event === 'record' && JSON.parse(b.data!).meta.message.content === 'hello');
    expect((await call(server, 'POST', `/read/${id}`, { message_number: 1, message_id: 'd-1' }, keys.chat_d)).status).toBe(200);
    await settles(async () =>
      expect((await call(server, 'GET', `/messages/${id}/find`, { number: 1 }, keys.chat_c)).body.ids).toEqual({
        chat_a: 'a-1',
        chat_c: 'c-1',
        chat_d: 'd-1',
      }),
    );
    expect(hook.calls[0]).toMatchObject({ method: 'POST', wait: true, body: { content: 'hello' } });

    // Any copy's ID finds it, for every platform that takes part; a platform that does not cannot.
    const found = await call(server, 'GET', `/messages/${id}/find`, { platform: 'chat_a', message_id: 'a-1' }, keys.chat_d);
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({
      number: 1,
      sender: 'chat_c',
      ids: { chat_a: 'a-1', chat_c: 'c-1', chat_d: 'd-1' },
      edits: 0,
      deleted: false,
    });
    expect((await call(server, 'GET', `/messages/${id}/find`, { platform: 'chat_a', message_id: 'a-1' }, keys.chat_b)).status).toBe(401);
    const missing = await call(server, 'GET', `/messages/${id}/find`, { platform: 'chat_a', message_id: 'a-404' }, keys.chat_d);
    expect(missing.status).toBe(404);
    expect(missing.body.type).toMatch(/#no-such-message$/);

    // Only the sender's platform edits or deletes; nothing is applied for anyone else.
    const byD = await call(
      server,
      'POST',
      `/messages/${id}/edit`,
      { platform: 'chat_c', message_id: 'c-1', message_content: 'not mine' },
      keys.chat_d,
    );
    expect(byD.status).toBe(403);
    expect((await call(server, 'POST', `/messages/${id}/delete`, { platform: 'chat_c', message_id: 'c-1' }, keys.chat_d)).status).toBe(403);
    // An ID is unique per endpoint and platform.
    const again = await call(
      server,
      'POST',
      `/update/${id}`,
      { sender: 'chat_c', sender_channel: channels.chat_c, message_content: 'resent', trigger: true, message_id: 'c-1' },
      keys.chat_c,
    );
    expect(again.status).toBe(409);
    expect(again.body.type).toMatch(/#duplicate-message-id$/);

    // The map survives a restart (SQLite) or is the same from a second instance (PostgreSQL).
    if (kind === 'sqlite') {
      for (const s of streams.splice(0)) s.close();
      await servers.pop()!.close();
      server = await start();
    } else {
      server = await start();
    }
    const dLive = await openSse(`${server.url}/events/${id}`, bearer(keys.chat_d));
    const cLive = await openSse(`${server.url}/events/${id}`, bearer(keys.chat_c));
    streams.push(dLive, cLive);
    await dLive.next();
    await cLive.next();

    // The edit, named by chat_c's ID: the webhook edits a-1, chat_d's stream names d-1.
    const edited = await call(
      server,
      'POST',
      `/messages/${id}/edit`,
      { platform: 'chat_c', message_id: 'c-1', message_content: 'hello, edited' },
      keys.chat_c,
    );
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ number: 1, edits: 1, message: { content: 'hello, edited' } });
    const editEvent = await readUntil(dLive, (b) => b.event === 'edit');
    expect(JSON.parse(editEvent.data!)).toMatchObject({
      number: 1,
      ids: { chat_d: 'd-1' },
      message: { content: 'hello, edited' },
      edits: 1,
    });
    await settles(async () => expect(hook.calls.some((c) => c.method === 'PATCH')).toBe(true));
    expect(hook.calls.find((c) => c.method === 'PATCH')).toMatchObject({
      path: `/api/webhooks/1234/${'t'.repeat(40)}/messages/a-1`,
      body: { content: 'hello, edited' },
    });

    // chat_d replies to its copy d-1: chat_a gets a reply to a-1, chat_c's stream names c-1.
    const reply = await call(
      server,
      'POST',
      `/update/${id}`,
      {
        sender: 'chat_d',
        sender_channel: channels.chat_d,
        message_content: 'a reply',
        trigger: true,
        message_reply_to: 'd-1',
        message_id: 'd-2',
      },
      keys.chat_d,
    );
    expect(reply.status).toBe(200);
    const replied = await readUntil(cLive, (b) => b.event === 'record' && JSON.parse(b.data!).meta.message.content === 'a reply');
    expect(JSON.parse(replied.data!).meta.message).toMatchObject({
      isReply: true,
      reply: { number: 1, ids: { chat_c: 'c-1', chat_a: 'a-1', chat_d: 'd-1' } },
    });
    await settles(async () => expect(hook.calls.filter((c) => c.method === 'POST')).toHaveLength(2));
    expect(hook.calls.filter((c) => c.method === 'POST')[1]!.body).toMatchObject({
      content: 'a reply',
      message_reference: { message_id: 'a-1', fail_if_not_exists: false },
    });

    // The delete: the webhook deletes a-1, chat_d's stream names d-1, and the log keeps no text of it.
    const deleted = await call(server, 'POST', `/messages/${id}/delete`, { platform: 'chat_c', message_id: 'c-1' }, keys.chat_c);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({
      number: 1,
      deleted: true,
      message: { content: null },
      ids: { chat_a: 'a-1', chat_c: 'c-1', chat_d: 'd-1' },
    });
    const deleteEvent = await readUntil(dLive, (b) => b.event === 'delete');
    expect(JSON.parse(deleteEvent.data!)).toMatchObject({ number: 1, ids: { chat_d: 'd-1' } });
    await settles(async () => expect(hook.calls.some((c) => c.method === 'DELETE')).toBe(true));
    expect(hook.calls.find((c) => c.method === 'DELETE')!.path).toMatch(/\/messages\/a-1$/);
    const editDeleted = await call(server, 'POST', `/messages/${id}/edit`, { number: 1, message_content: 'too late' }, keys.chat_c);
    expect(editDeleted.status).toBe(409);
    expect(editDeleted.body.type).toMatch(/#message-deleted$/);
  });

  it('when an edit follows its message by 1 ms, then the webhook gets it after the create; a message deleted before delivery is never delivered', async () => {
    backend ??= await makeBackend();
    hook ??= await startChatWebhook();
    const server = await start();
    const id = `order-${kind}`;
    const token = await server.provision(id);
    const setup = { token, channel_chat_a: 'a-order-0001', channel_chat_c: 'c-order-0001', webhook_chat_a: hook.url, selfuse: true };
    expect((await call(server, 'POST', `/update/${id}`, setup, '')).status).toBe(200);
    const before = hook.calls.length;
    const send = (content: string, messageId: string) =>
      call(
        server,
        'POST',
        `/update/${id}`,
        { token, sender: 'chat_c', sender_channel: 'c-order-0001', message_content: content, trigger: true, message_id: messageId },
        '',
      );
    expect((await send('first', 'o-1')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1));
    expect(
      (
        await call(
          server,
          'POST',
          `/messages/${id}/edit`,
          { token, platform: 'chat_c', message_id: 'o-1', message_content: 'first, edited' },
          '',
        )
      ).status,
    ).toBe(200);
    await settles(async () => expect(hook.calls.slice(before).map((c) => c.method)).toEqual(['POST', 'PATCH']));
    expect(hook.calls.slice(before).map((c) => c.body?.content)).toEqual(['first', 'first, edited']);

    // A message deleted while its create waits is never created.
    hook.holdCreates = true;
    expect((await send('blocker', 'o-2')).status).toBe(200);
    expect((await send('never shown', 'o-3')).status).toBe(200);
    expect((await call(server, 'POST', `/messages/${id}/delete`, { token, platform: 'chat_c', message_id: 'o-3' }, '')).status).toBe(200);
    hook.release();
    await settles(async () =>
      expect(
        hook.calls
          .slice(before)
          .filter((c) => c.method === 'POST')
          .map((c) => c.body?.content),
      ).toEqual(['first', 'blocker']),
    );
    await server.relay.settled();
    await new Promise((r) => setTimeout(r, 300));
    expect(hook.calls.slice(before).some((c) => c.body?.content === 'never shown')).toBe(false);
    const log = await call(server, 'GET', `/messages/${id}`, { token }, '');
    expect(log.body.messages.map((m: { deleted: boolean }) => m.deleted)).toEqual([false, false, true]);
  });

  it('when a reply is sent before its target reached the other platforms, then each still gets it as a reply to its own copy', async () => {
    backend ??= await makeBackend();
    hook ??= await startChatWebhook();
    const server = await start();
    const admin = createChatbridgeClient({ baseUrl: server.url, adminToken: server.adminToken });
    const dKey = (await admin.createBot(`early-d-${kind}`, 'chat_d')).key;
    const id = `early-${kind}`;
    const token = await server.provision(id);
    const setup = {
      token,
      channel_chat_a: 'a-early-0001',
      channel_chat_c: 'c-early-0001',
      channel_chat_d: 'd-early-0001',
      webhook_chat_a: hook.url,
      selfuse: true,
    };
    expect((await call(server, 'POST', `/update/${id}`, setup, '')).status).toBe(200);
    const before = hook.calls.length;
    const send = (query: Record<string, string>) =>
      call(server, 'POST', `/update/${id}`, { token, sender: 'chat_c', sender_channel: 'c-early-0001', trigger: true, ...query }, '');

    // The webhook is behind and chat_d's bot has not polled yet: when the reply is accepted, only
    // chat_c's copy of its target has an ID.
    hook.holdCreates = true;
    expect((await send({ message_content: 'question', message_id: 'c-1' })).status).toBe(200);
    const reply = await send({ message_content: 'answer', message_id: 'c-2', message_reply_to: 'c-1' });
    expect(reply.status).toBe(200);
    expect(reply.body.meta.message.reply).toEqual({ author: null, message: null, number: 1, ids: { chat_c: 'c-1' } });

    // chat_d's polling loop relays the question, reports d-1, and is shown the answer replying to d-1.
    const first = await call(server, 'GET', `/${id}`, {}, dKey);
    expect(first.body.meta.message.content).toBe('question');
    expect((await call(server, 'POST', `/read/${id}`, { message_number: first.number!, message_id: 'd-1' }, dKey)).status).toBe(200);
    const second = await call(server, 'GET', `/${id}`, {}, dKey);
    expect(second.body.meta.message).toMatchObject({
      content: 'answer',
      isReply: true,
      reply: { number: 1, ids: { chat_c: 'c-1', chat_d: 'd-1' } },
    });
    const listed = await call(server, 'GET', `/messages/${id}`, { platform: 'chat_d' }, dKey);
    expect(listed.body.messages.map((m: { message: { reply: unknown } }) => m.message.reply)).toEqual([
      { author: null, message: null, number: 1, ids: { chat_c: 'c-1', chat_d: 'd-1' } },
    ]);

    // The webhook's queue goes on: the answer's create replies to the copy the question's create made.
    hook.release();
    await settles(async () => expect(hook.calls.slice(before).filter((c) => c.method === 'POST')).toHaveLength(2));
    const made = (await call(server, 'GET', `/messages/${id}/find`, { number: 1 }, dKey)).body.ids.chat_a as string;
    expect(made).toMatch(/^a-\d+$/);
    const [question, answer] = hook.calls.slice(before).filter((c) => c.method === 'POST');
    expect(question!.body).not.toHaveProperty('message_reference');
    expect(answer!.body).toMatchObject({
      content: expect.stringContaining('answer'),
      message_reference: { message_id: made, fail_if_not_exists: false },
    });
    expect(answer!.body).not.toHaveProperty('chatbridge:reply_to');
    const found = await call(server, 'GET', `/messages/${id}/find`, { platform: 'chat_c', message_id: 'c-2' }, dKey);
    expect(found.body.message.reply.ids).toEqual({ chat_a: made, chat_c: 'c-1', chat_d: 'd-1' });
  });
});
