// The stream of all changes (GET /events) through real HTTP on the SQLite store: its wire format,
// resuming, the change window, authorisation and routing beside GET /{endpoint}, and bounded memory.
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChangeEvent, createChatbridgeClient } from '@chatbridge/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { initialRecord } from '../../src/domain/record.ts';
import { SqliteEndpointStore } from '../../src/store/sqlite/store.ts';
import { startTestServer, type TestServer } from '../../src/testing.ts';
import { openSse, type SseBlock, type SseReader } from '../sseBlocks.ts';
import { raw, useServer } from './harness.ts';
import { eventually } from './receiver.ts';

const h = useServer({ events: { heartbeatMs: 150 } });
const opened: SseReader[] = [];
afterEach(() => opened.splice(0).forEach((s) => s.close()));

async function openAll(server: TestServer, headers: Record<string, string> = {}, query = ''): Promise<SseReader> {
  const stream = await openSse(`${server.url}/events${query}`, { authorization: `Bearer ${server.adminToken}`, ...headers });
  opened.push(stream);
  expect(stream.response.status).toBe(200);
  expect(stream.response.headers.get('content-type')).toBe('text/event-stream');
  expect((await stream.next())?.retry).toBe(2000);
  return stream;
}

const dataOf = (block: SseBlock | undefined) =>
  JSON.parse(block!.data!) as {
    endpoint: string | null;
    version?: number;
    messageNumber?: number | null;
    record?: { config: { blacklist: string[] } };
  };
const summary = (block: SseBlock | undefined) => {
  const d = dataOf(block);
  return block!.event === 'change' ? `${d.endpoint}@${d.version}:${d.record!.config.blacklist.join(',')}` : `reset:${d.endpoint}`;
};

describe('streamAllEvents', () => {
  it('when changes of several endpoints commit, then the stream sends each once, in commit order, with version, message number and record', async () => {
    const a = await h.endpoint('all');
    const b = await h.endpoint('all');
    const stream = await openAll(h.server);
    const start = await stream.next();
    expect(start).toMatchObject({ event: 'reset' }); // a fresh stream starts at the newest position
    expect(dataOf(start)).toEqual({ endpoint: null });
    await h.client.updateEndpoint(a.id, a.token, { blacklist: 'x' });
    await h.client.updateEndpoint(b.id, b.token, { channel_chat_a: 'a-0000-chan', channel_chat_c: 'c-0000-chan' });
    await h.client.updateEndpoint(b.id, b.token, { sender: 'chat_c', sender_channel: 'c-0000-chan', message_content: 'hi', trigger: true });
    await h.client.updateEndpoint(a.id, a.token, { blacklist: 'y' });
    const blocks = [await stream.next(), await stream.next(), await stream.next(), await stream.next()];
    expect(blocks.map(summary)).toEqual([`${a.id}@1:x`, `${b.id}@1:`, `${b.id}@2:`, `${a.id}@2:x,y`]);
    const positions = [start, ...blocks].map((block) => Number(block!.id));
    expect(positions).toEqual([...positions].sort((x, y) => x - y));
    expect(new Set(positions).size).toBe(5);
    // The message number is the one getEndpoint's header gives while the message is pending.
    const read = await raw(`${h.server.url}/${b.id}?token=${b.token}`);
    const pending = Number(read.headers.get('chatbridge-message-number'));
    expect(pending).toBeGreaterThan(0);
    expect(blocks.map((block) => dataOf(block).messageNumber)).toEqual([null, null, pending, null]);
  });

  it('when a client resumes with Last-Event-ID (or last_event_id), then it gets every change after that position, none twice', async () => {
    const a = await h.endpoint('all');
    const first = await openAll(h.server);
    await first.next();
    for (const word of ['1', '2', '3']) await h.client.updateEndpoint(a.id, a.token, { blacklist: word });
    const seen = [await first.next(), await first.next()];
    first.close();
    await h.client.updateEndpoint(a.id, a.token, { blacklist: '4' });
    const resumed = await openAll(h.server, { 'last-event-id': seen[1]!.id! });
    expect([await resumed.next(), await resumed.next()].map(summary)).toEqual([`${a.id}@3:1,2,3`, `${a.id}@4:1,2,3,4`]);
    const byQuery = await openAll(h.server, {}, `?last_event_id=${seen[0]!.id}`);
    expect(summary(await byQuery.next())).toBe(`${a.id}@2:1,2`);
  });

  it('when Last-Event-ID is no position the service issued, then a reset at the newest position says changes were missed', async () => {
    const stream = await openAll(h.server, { 'last-event-id': '999999999' });
    const reset = await stream.next();
    expect(reset).toMatchObject({ event: 'reset' });
    expect(dataOf(reset)).toEqual({ endpoint: null });
    expect(Number(reset!.id)).toBeLessThan(999999999);
  });

  it('when the admin token is missing or wrong, then 401 problem and no stream', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }]) {
      const res = await raw(`${h.server.url}/events`, { headers });
      expect(res.status).toBe(401);
      expect(res.type).toMatch(/^application\/problem\+json/);
    }
  });

  it('when an endpoint is named events, then GET /events is still the stream of all changes, and GET /events/{endpoint} the endpoint stream', async () => {
    const token = await h.server.provision('events');
    // Its token opens nothing here: the path is the stream of all changes, never getEndpoint("events").
    const asRecord = await raw(`${h.server.url}/events?token=${token}`);
    expect(asRecord.status).toBe(401);
    expect(asRecord.type).toMatch(/^application\/problem\+json/);
    const all = await openAll(h.server);
    expect((await all.next())?.event).toBe('reset');
    const own = await openSse(`${h.server.url}/events/events?token=${token}`);
    opened.push(own);
    expect(own.response.status).toBe(200);
    expect((await own.next())?.retry).toBe(2000);
    expect(await own.next()).toMatchObject({ id: '0', event: 'record' });
  });
});

describe('streamAllEvents through @chatbridge/client', () => {
  it('when the connection drops mid-way, then the iterator reconnects by itself with Last-Event-ID and yields every change once', async () => {
    const a = await h.endpoint('all');
    // A fetch that cuts the first stream's body after its second event, as a dropped connection would.
    let streams = 0;
    const dropping = async (request: Request): Promise<Response> => {
      const response = await fetch(request);
      if (new URL(request.url).pathname !== '/events' || ++streams > 1) return response;
      const reader = response.body!.getReader();
      let events = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          controller.enqueue(value);
          events += (
            Buffer.from(value)
              .toString()
              .match(/\nevent: /g) ?? []
          ).length;
          if (events >= 2) {
            await reader.cancel();
            controller.error(new Error('connection reset'));
          }
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const client = createChatbridgeClient({ baseUrl: h.server.url, adminToken: h.server.adminToken, fetch: dropping });
    const seen: ChangeEvent[] = [];
    let written = 0;
    for await (const event of client.streamAllEvents({ retryMs: 10 })) {
      seen.push(event);
      if (event.type === 'reset' || written < 4) {
        // Each event (the first reset, then each change) is answered by the next change, until four.
        if (written < 4) await h.client.updateEndpoint(a.id, a.token, { blacklist: `w${++written}` });
      }
      if (seen.filter((e) => e.type === 'change').length === 4) break;
    }
    expect(streams).toBeGreaterThanOrEqual(2);
    expect(seen[0]).toMatchObject({ type: 'reset', endpoint: null });
    expect(seen.slice(1).map((e) => (e.type === 'change' ? `${e.endpoint}@${e.version}` : 'reset'))).toEqual(
      [1, 2, 3, 4].map((v) => `${a.id}@${v}`),
    );
  });
});

describe('streamAllEvents with a change window of 3 changes', () => {
  let server: TestServer;
  let store: SqliteEndpointStore;
  beforeAll(async () => {
    store = new SqliteEndpointStore(join(mkdtempSync(join(tmpdir(), 'chatbridge-all-')), 'store.sqlite'), {
      changeWindow: { maxChanges: 3 },
    });
    server = await startTestServer({ store, events: { heartbeatMs: 150 } });
  });
  afterAll(() => server.close());

  it('when Last-Event-ID is older than the window, then a reset with no endpoint, then the live changes', async () => {
    const token = await server.provision('w-1');
    const first = await openAll(server);
    const start = await first.next();
    const update = (word: string) => fetch(`${server.url}/update/w-1?token=${token}&blacklist=${word}`, { method: 'POST' });
    for (const word of ['a', 'b', 'c', 'd', 'e']) expect((await update(word)).status).toBe(200);
    first.close();
    await store.changes.prune();
    const resumed = await openAll(server, { 'last-event-id': start!.id! });
    const reset = await resumed.next();
    expect(reset).toMatchObject({ event: 'reset' });
    expect(dataOf(reset)).toEqual({ endpoint: null });
    await update('f');
    expect(summary(await resumed.next())).toBe('w-1@6:a,b,c,d,e,f');
  });
});

describe('streamAllEvents and a client that never reads', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ events: { heartbeatMs: 100, slowStreamBudgetBytes: 1000 } });
  });
  afterAll(() => server.close());

  it('when its stream holds more than the slow streams budget, then the stream is ended and the server serves on', async () => {
    await server.provision('slow-1');
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write(`GET /events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.adminToken}\r\nAccept: text/event-stream\r\n\r\n`);
    socket.pause(); // never reads: the kernel's buffers fill, then the server's
    let closed = false;
    let received = 0;
    socket.on('close', () => (closed = true));
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.on('error', () => undefined);
    // 30 changes of a 1 MB record: far more than the kernel's socket buffers take.
    for (let v = 1; v <= 30; v++) {
      await server.store.endpoints.update('slow-1', (cur) => {
        const record = initialRecord();
        record.config.blacklist = [`v${v}`, 'x'.repeat(1_000_000)];
        return { write: { record, state: cur!.state }, result: undefined };
      });
    }
    expect((await fetch(`${server.url}/-/live`)).status).toBe(200);
    // The client reads again: what the server had sent, then the end, long before the 30 MB.
    socket.resume();
    await eventually(async () => closed, 5000);
    expect(received).toBeLessThan(10_000_000);
    socket.destroy();
  });
});
