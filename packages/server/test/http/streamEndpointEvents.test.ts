// The event stream through real HTTP on the SQLite store: the wire format read raw, block by block,
// and the same stream through @chatbridge/client's async iterator.
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointRecord } from '../../src/domain/record.ts';
import { SqliteEndpointStore } from '../../src/store/sqlite/store.ts';
import { startTestServer, type TestServer } from '../../src/testing.ts';
import { hashToken } from '../../src/tokens.ts';
import { raw, useServer } from './harness.ts';
import { eventually } from './receiver.ts';

const HEARTBEAT_MS = 150;
const h = useServer({ events: { heartbeatMs: HEARTBEAT_MS } });

/** One block of the stream: an event, a comment or a retry field, as sent. */
interface Block {
  text: string;
  /** The version in the event's ID. */
  id?: number;
  event?: string;
  record?: EndpointRecord;
  /** The message number in the event's ID (`<version>-<message number>`), null when it has none. */
  messageNumber?: number | null;
  comment?: string;
  retry?: number;
}

function parseBlock(text: string): Block {
  const block: Block = { text };
  for (const line of text.split('\n')) {
    const at = line.indexOf(':');
    const field = line.slice(0, at);
    const value = line.slice(at + 1).replace(/^ /, '');
    if (field === '') block.comment = value;
    else if (field === 'id') {
      const [version, number] = value.split('-');
      block.id = Number(version);
      block.messageNumber = number === undefined ? null : Number(number);
    } else if (field === 'event') block.event = value;
    else if (field === 'data') block.record = JSON.parse(value) as EndpointRecord;
    else if (field === 'retry') block.retry = Number(value);
    else throw new Error(`unexpected line ${JSON.stringify(line)}`);
  }
  return block;
}

interface RawStream {
  response: Response;
  /** The next block that is not a heartbeat; rejects after `timeoutMs`, resolves undefined when the stream ends. */
  next(timeoutMs?: number): Promise<Block | undefined>;
  /** The next block of any kind, heartbeats included. */
  nextAny(timeoutMs?: number): Promise<Block | undefined>;
  /** Resolves true if no event (heartbeats aside) arrives within `ms`. */
  quietFor(ms: number): Promise<boolean>;
  close(): void;
}

/** Opens the stream with fetch and reads its body as blocks separated by empty lines. */
async function openStream(url: string, headers: Record<string, string> = {}): Promise<RawStream> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let ended = false;
  /** The read in progress, if any: one at a time, and one outliving a deadline is picked up later. */
  let reading: Promise<void> | undefined;
  const readMore = async () => {
    const { value, done } = await reader.read();
    if (done) ended = true;
    else buffer += value;
  };
  const nextAny = async (timeoutMs = 5000): Promise<Block | undefined> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const text = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        return parseBlock(text);
      }
      if (ended) return undefined;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no block within ${timeoutMs} ms; buffered ${JSON.stringify(buffer.slice(0, 200))}`);
      reading ??= readMore().finally(() => {
        reading = undefined;
      });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([reading, new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
  };
  const next = async (timeoutMs = 5000): Promise<Block | undefined> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const block = await nextAny(Math.max(1, deadline - Date.now()));
      if (block?.comment !== 'heartbeat') return block;
    }
  };
  return {
    response,
    next,
    nextAny,
    async quietFor(ms) {
      try {
        const block = await next(ms);
        if (block === undefined) return true;
        throw new Error(`expected silence, got ${block.text.slice(0, 80)}`);
      } catch (error) {
        if ((error as Error).message.startsWith('no block within')) return true;
        throw error;
      }
    },
    close: () => controller.abort(),
  };
}

const streamUrl = (server: { url: string }, id: string, token: string, query = '') => `${server.url}/events/${id}?token=${token}${query}`;

/** Opens a stream and checks the retry block that always comes first. */
async function open(id: string, token: string, headers: Record<string, string> = {}, query = '', server: { url: string } = h.server) {
  const stream = await openStream(streamUrl(server, id, token, query), headers);
  expect(stream.response.status).toBe(200);
  expect(await stream.next()).toMatchObject({ retry: 2000 });
  return stream;
}

describe('streamEndpointEvents', () => {
  const streams: RawStream[] = [];
  const track = <T extends RawStream>(s: T) => (streams.push(s), s);
  afterAll(() => streams.forEach((s) => s.close()));

  it('when a stream opens without Last-Event-ID, then 200 text/event-stream, uncached, with retry first and the current record as event 0', async () => {
    const { id, token } = await h.endpoint('sse');
    const stream = track(await openStream(streamUrl(h.server, id, token)));
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toBe('text/event-stream');
    expect(stream.response.headers.get('cache-control')).toBe('no-store');
    expect(stream.response.headers.get('x-accel-buffering')).toBe('no');
    expect(await stream.next()).toEqual({ text: 'retry: 2000', retry: 2000 });
    const first = await stream.next();
    expect(first).toMatchObject({ id: 0, event: 'record', record: await h.client.getEndpoint(id, token) });
    // Exactly three lines: id (the version; no message pending), event, and the record JSON on one line.
    expect(first!.text.split('\n')).toEqual(['id: 0', 'event: record', `data: ${JSON.stringify(first!.record)}`]);
  });

  it('when updates and markRead commit, then one event per change, ids increasing by one, each the committed record', async () => {
    const { id, token } = await h.endpoint('sse');
    const stream = track(await open(id, token));
    expect(await stream.next()).toMatchObject({ id: 0 });
    const committed = [
      await h.client.updateEndpoint(id, token, { channel_chat_a: 'a-0', channel_chat_c: 'c-0000' }),
      await h.client.updateEndpoint(id, token, {
        sender: 'chat_c',
        sender_channel: 'c-0000-chan',
        message_content: 'hi & bye',
        trigger: true,
      }),
      await h.client.markRead(id, token, 'chat_a'), // the last reader: the message finishes, back to idle
    ];
    const events = [];
    for (const [i, record] of committed.entries()) {
      const event = await stream.next();
      expect(event).toMatchObject({ id: i + 1, event: 'record', record });
      events.push(event);
    }
    expect(committed[2]!.meta.trigger).toBe(false);
    // Each event's ID carries the message number as getEndpoint's header gives it: only while pending.
    expect(events.map((e) => e!.messageNumber)).toEqual([null, 1, null]);
    expect(events[1]!.text.split('\n')[0]).toBe('id: 2-1');
  });

  it('when a client resumes with an event ID that carries a message number (header or query), then it continues after that version', async () => {
    const { id, token } = await h.endpoint('sse');
    await h.client.updateEndpoint(id, token, { channel_chat_a: 'a-0', channel_chat_c: 'c-0000-chan' });
    await h.client.updateEndpoint(id, token, { sender: 'chat_c', sender_channel: 'c-0000-chan', message_content: 'hi', trigger: true });
    const next = await h.client.updateEndpoint(id, token, { blacklist: 'w' });
    for (const [headers, query] of [
      [{ 'Last-Event-ID': '2-1' }, ''],
      [{}, '&last_event_id=2-1'],
    ] as const) {
      const stream = track(await open(id, token, headers, query));
      expect(await stream.next()).toMatchObject({ id: 3, messageNumber: 1, event: 'record', record: next });
      stream.close();
    }
  });

  it('when the stream is read as an EventSource reads it, then the lastEventId of each event names the pending message, and markRead takes that number', async () => {
    const { id, token } = await h.endpoint('sse');
    await h.client.updateEndpoint(id, token, { channel_chat_a: 'a-0', channel_chat_c: 'c-0000-chan' });
    const controller = new AbortController();
    const response = await fetch(streamUrl(h.server, id, token), { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    // What an EventSource hands its listeners: the event's type, data and lastEventId, nothing else.
    const received: { type: string; data: string; lastEventId: string }[] = [];
    const dropped: string[] = [];
    let lastEventId = '';
    const parser = createParser({
      onEvent: ({ id: eventId, event, data }) => {
        if (eventId !== undefined) lastEventId = eventId;
        received.push({ type: event ?? 'message', data, lastEventId });
      },
      onError: (error) => dropped.push(error.message),
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const until = async (count: number) => {
      while (received.length < count) {
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        parser.feed(value);
      }
    };
    await until(1);
    const pending = await h.client.updateEndpoint(id, token, {
      sender: 'chat_c',
      sender_channel: 'c-0000-chan',
      message_content: 'hello',
      trigger: true,
    });
    await until(2);
    controller.abort();

    const [, message] = received;
    expect(message!.type).toBe('record');
    expect(JSON.parse(message!.data)).toEqual(pending);
    const number = Number(message!.lastEventId.split('-')[1]);
    const read = await raw(`${h.server.url}/${id}?token=${token}`);
    expect(number).toBe(Number(read.headers.get('chatbridge-message-number')));
    expect(dropped).toEqual([]); // no field an EventSource would ignore
    const after = await h.client.markRead(id, token, 'chat_a', { messageNumber: number });
    expect(after.meta.trigger).toBe(false);
  });

  it('when the stream is asked with HEAD, then its headers are answered and the connection ends', async () => {
    const { id, token } = await h.endpoint('sse');
    const { port } = new URL(h.server.url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.write(`HEAD /events/${id}?token=${token} HTTP/1.1\r\nHost: test\r\n\r\n`);
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const closed = await Promise.race([once(socket, 'end').then(() => true), sleep(3000).then(() => false)]);
    socket.destroy();
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(received).toMatch(/content-type: text\/event-stream/i);
    expect(closed).toBe(true);
  });

  it('when an update changes nothing, only checks, or markRead has nothing to mark, then no event', async () => {
    const { id, token } = await h.endpoint('sse');
    const stream = track(await open(id, token));
    expect(await stream.next()).toMatchObject({ id: 0 });
    await h.client.updateEndpoint(id, token, {});
    await h.client.updateEndpoint(id, token, { only_check: true, blacklist: 'ignored' });
    await h.client.markRead(id, token, 'chat_b');
    // Ending a message while none is pending: bots send trigger=false with their config updates.
    await h.client.updateEndpoint(id, token, { trigger: false });
    await h.client.updateEndpoint(id, token, { trigger: false, beta: false });
    // A message no other platform can receive (none has channels) is finished at once: the record is unchanged.
    await h.client.updateEndpoint(id, token, {
      sender: 'chat_d',
      sender_channel: 'chan-d-0001',
      message_content: 'to nobody',
      trigger: true,
    });
    expect(await stream.quietFor(300)).toBe(true);
    const changed = await h.client.updateEndpoint(id, token, { blacklist: 'spam' });
    expect(await stream.next()).toMatchObject({ id: 1, record: changed });
  });

  it('when the stream is idle, then a heartbeat comment arrives every interval', async () => {
    const { id, token } = await h.endpoint('sse');
    const stream = track(await open(id, token));
    expect(await stream.nextAny()).toMatchObject({ id: 0 });
    const started = Date.now();
    expect(await stream.nextAny(HEARTBEAT_MS * 10)).toEqual({ text: ': heartbeat', comment: 'heartbeat' });
    expect(await stream.nextAny(HEARTBEAT_MS * 10)).toEqual({ text: ': heartbeat', comment: 'heartbeat' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(HEARTBEAT_MS);
  });

  it('when the token is missing, wrong, foreign, or the endpoint does not exist, then 401 with the body getEndpoint sends', async () => {
    const mine = await h.endpoint('sse');
    const other = await h.endpoint('sse');
    const wrong = `cbt_${'x'.repeat(72)}`;
    const accept = { headers: { accept: 'text/event-stream' } };
    const answers = await Promise.all([
      raw(`${h.server.url}/events/${mine.id}`, accept),
      raw(`${h.server.url}/events/${mine.id}?token=${wrong}`, accept),
      raw(`${h.server.url}/events/${mine.id}?token=${other.token}`, accept),
      raw(`${h.server.url}/events/no-such-endpoint?token=${mine.token}`, accept),
    ]);
    const reference = await raw(`${h.server.url}/${mine.id}?token=${wrong}`);
    for (const a of answers) {
      expect(a.status).toBe(401);
      expect(a.type).toContain('application/problem+json');
      const { instance: _a, ...body } = a.body;
      const { instance: _r, ...expected } = reference.body;
      expect(body).toEqual(expected);
    }
  });

  it('when last_event_id is not an event ID or a parameter is unknown, then 400 naming it', async () => {
    const { id, token } = await h.endpoint('sse');
    for (const [query, parameter] of [
      ['&last_event_id=abc', 'last_event_id'],
      ['&last_event_id=-1', 'last_event_id'],
      ['&last_event_id=1.5', 'last_event_id'],
      ['&last_event_id=1-', 'last_event_id'],
      ['&lastEventId=3', 'lastEventId'],
    ]) {
      const r = await raw(streamUrl(h.server, id, token, query));
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual([expect.objectContaining({ parameter })]);
    }
  });

  it('when a client reconnects with Last-Event-ID, then exactly the events it missed are replayed, in order, then live ones', async () => {
    const { id, token } = await h.endpoint('sse');
    const first = track(await open(id, token));
    await h.client.updateEndpoint(id, token, { blacklist: 'w1' });
    await h.client.updateEndpoint(id, token, { blacklist: 'w2' });
    const seen = [await first.next(), await first.next(), await first.next()].map((b) => b!.id);
    expect(seen).toEqual([0, 1, 2]);
    first.close();

    const missed = [];
    for (let i = 3; i <= 6; i++) missed.push(await h.client.updateEndpoint(id, token, { blacklist: `w${i}` }));

    const second = track(await open(id, token, { 'Last-Event-ID': '2' }));
    for (const [i, record] of missed.entries()) expect(await second.next()).toMatchObject({ id: 3 + i, event: 'record', record });
    const live = await h.client.updateEndpoint(id, token, { blacklist: 'w7' });
    expect(await second.next()).toMatchObject({ id: 7, record: live });
    expect(await second.quietFor(200)).toBe(true);
  });

  it('when the client resumes from the current version, then nothing is replayed until the next change', async () => {
    const { id, token } = await h.endpoint('sse');
    await h.client.updateEndpoint(id, token, { blacklist: 'w1' });
    const stream = track(await open(id, token, { 'Last-Event-ID': '1' }));
    expect(await stream.quietFor(200)).toBe(true);
    await h.client.updateEndpoint(id, token, { blacklist: 'w2' });
    expect(await stream.next()).toMatchObject({ id: 2, event: 'record' });
  });

  it('when last_event_id is given in the query, then it resumes the same way, and a Last-Event-ID header wins over it', async () => {
    const { id, token } = await h.endpoint('sse');
    for (let i = 1; i <= 3; i++) await h.client.updateEndpoint(id, token, { blacklist: `w${i}` });
    const byQuery = track(await open(id, token, {}, '&last_event_id=1'));
    expect([(await byQuery.next())!.id, (await byQuery.next())!.id]).toEqual([2, 3]);
    const both = track(await open(id, token, { 'Last-Event-ID': '2' }, '&last_event_id=0'));
    expect(await both.next()).toMatchObject({ id: 3 });
    expect(await both.quietFor(200)).toBe(true);
  });

  it('when Last-Event-ID is no version of this endpoint (not a number, or in the future), then a reset event carries the current record', async () => {
    const { id, token } = await h.endpoint('sse');
    const current = await h.client.updateEndpoint(id, token, { blacklist: 'w1' });
    for (const lastEventId of ['not-a-number', '99', '1.5']) {
      const stream = track(await open(id, token, { 'Last-Event-ID': lastEventId }));
      expect(await stream.next()).toMatchObject({ id: 1, event: 'reset', record: current });
      stream.close();
    }
  });

  it('when the token is rotated or the endpoint deleted, then its open streams end', async () => {
    const { id, token } = await h.endpoint('sse');
    const stream = track(await open(id, token));
    expect(await stream.next()).toMatchObject({ id: 0 });
    const { token: rotated } = await h.client.rotateEndpointToken(id);
    expect(await stream.next()).toBeUndefined();

    const again = track(await open(id, rotated));
    expect(await again.next()).toMatchObject({ id: 0 });
    await h.client.deleteEndpoint(id);
    expect(await again.next()).toBeUndefined();
  });

  it('when read through @chatbridge/client, then the iterator yields the same typed events and resumes after the last one', async () => {
    const { id, token } = await h.endpoint('sse');
    const controller = new AbortController();
    const seen: { id: number; type: string; blacklist: string[] }[] = [];
    const reading = (async () => {
      for await (const e of h.client.streamEndpointEvents(id, token, { signal: controller.signal })) {
        seen.push({ id: e.id, type: e.type, blacklist: e.record.config.blacklist });
        if (e.id === 0) await h.client.updateEndpoint(id, token, { blacklist: 'a' });
        if (e.id === 1) break;
      }
    })();
    await reading;
    await h.client.updateEndpoint(id, token, { blacklist: 'b' });
    for await (const e of h.client.streamEndpointEvents(id, token, { lastEventId: 1 })) {
      seen.push({ id: e.id, type: e.type, blacklist: e.record.config.blacklist });
      break;
    }
    expect(seen).toEqual([
      { id: 0, type: 'record', blacklist: [] },
      { id: 1, type: 'record', blacklist: ['a'] },
      { id: 2, type: 'record', blacklist: ['a', 'b'] },
    ]);
  });
});

describe('streamEndpointEvents with at most 2 streams per endpoint', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ events: { heartbeatMs: HEARTBEAT_MS, maxPerEndpoint: 2 } });
  });
  afterAll(() => server.close());

  it('when an endpoint has all the streams it may, then another gets 429 with Retry-After; other endpoints and a freed slot are not affected', async () => {
    const [a, b] = [await server.provision('streams-a'), await server.provision('streams-b')];
    const first = await open('streams-a', a, {}, '', server);
    const second = await open('streams-a', a, {}, '', server);
    const refused = await raw(streamUrl(server, 'streams-a', a));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('10');
    expect(refused.body).toMatchObject({ type: 'https://chatbridge.dev/problems#rate-limited' });
    const other = await open('streams-b', b, {}, '', server);
    first.close();
    // The server learns of the hang-up when the socket closes: the slot frees then.
    await eventually(async () => (await openStatus(server, 'streams-a', a)) === 200, 3000);
    for (const s of [second, other]) s.close();
  });
});

/** Opens a stream only to read its status, then hangs up. */
async function openStatus(server: { url: string }, id: string, token: string): Promise<number> {
  const controller = new AbortController();
  const response = await fetch(streamUrl(server, id, token), { signal: controller.signal });
  controller.abort();
  return response.status;
}

describe('streamEndpointEvents with a replay window of 3 events', () => {
  let server: TestServer;
  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'chatbridge-sse-')), 'store.sqlite');
    server = await startTestServer({
      store: new SqliteEndpointStore(file, { eventWindow: { maxEvents: 3 } }),
      events: { heartbeatMs: HEARTBEAT_MS },
    });
  });
  afterAll(() => server.close());

  it('when Last-Event-ID is older than the window, then a reset event carries the current record, and live events follow', async () => {
    const token = await server.provision('small-window');
    const update = async (word: string) => {
      const r = await fetch(`${server.url}/update/small-window?token=${token}&blacklist=${word}`, { method: 'POST' });
      return (await r.json()) as EndpointRecord;
    };
    for (let i = 1; i <= 5; i++) await update(`w${i}`);
    const current = await update('w6'); // version 6; the log keeps 4..6

    const inWindow = await open('small-window', token, { 'Last-Event-ID': '3' }, '', server);
    expect([(await inWindow.next())!.id, (await inWindow.next())!.id, (await inWindow.next())!.id]).toEqual([4, 5, 6]);
    inWindow.close();

    const tooOld = await open('small-window', token, { 'Last-Event-ID': '2' }, '', server);
    expect(await tooOld.next()).toMatchObject({ id: 6, event: 'reset', record: current });
    const live = await update('w7');
    expect(await tooOld.next()).toMatchObject({ id: 7, event: 'record', record: live });
    tooOld.close();
  });
});

describe('streamEndpointEvents and another process on the same SQLite file', () => {
  it('when the CLI (another connection) rotates the token or deletes the endpoint, then the open stream ends at once, not at its next heartbeat', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'chatbridge-sse-')), 'store.sqlite');
    const server = await startTestServer({ store: new SqliteEndpointStore(file), events: { heartbeatMs: 60_000 } });
    const cli = new SqliteEndpointStore(file);
    try {
      const token = await server.provision('elsewhere');
      const first = await open('elsewhere', token, {}, '', server);
      expect(await first.next()).toMatchObject({ id: 0 });
      expect(await cli.endpoints.setTokenHash('elsewhere', hashToken('rotated elsewhere'))).toBe(true);
      expect(await first.next(3000)).toBeUndefined();

      const token2 = await server.provision('elsewhere-2');
      const second = await open('elsewhere-2', token2, {}, '', server);
      expect(await second.next()).toMatchObject({ id: 0 });
      expect(await cli.endpoints.delete('elsewhere-2')).toBe(true);
      expect(await second.next(3000)).toBeUndefined();
    } finally {
      await cli.close();
      await server.close();
    }
  });
});

describe('streamEndpointEvents and shutdown', () => {
  it('when the service closes, then open streams end and closing does not wait for their clients', async () => {
    const server = await startTestServer();
    const token = await server.provision('shutdown');
    const streams = await Promise.all(Array.from({ length: 3 }, () => open('shutdown', token, {}, '', server)));
    for (const s of streams) expect(await s.next()).toMatchObject({ id: 0 });
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(2000);
    for (const s of streams) expect(await s.next()).toBeUndefined();
  });
});
