import { describe, expect, expectTypeOf, test } from 'vitest';
import {
  type ChangeEvent,
  createChatbridgeClient,
  type EndpointEvent,
  type MessageChangeEvent,
  type MessageLogEvent,
} from '../src/index.ts';
import { BASE_URL, ENDPOINT, fakeFetch, RECORD, setup, TOKEN } from './helpers.ts';

const MESSAGE = { ...RECORD.meta.message, content: 'Hello (edited)' };
const EDIT = { number: 1, ids: { chat_c: 'c-1', chat_d: 'd-1' }, message: MESSAGE, edits: 1, edited_at: '2026-11-28T20:01:00.000Z' };
const DELETE = { number: 1, ids: { chat_c: 'c-1', chat_d: 'd-1' }, deleted_at: '2026-11-28T20:02:00.000Z' };

const block = (id: string | number, type: string, data: unknown) => `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;

/** A text/event-stream response that sends `chunks` and ends. */
function eventStream(chunks: string[]): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

async function collect<E>(events: AsyncIterable<E>): Promise<E[]> {
  const seen: E[] = [];
  for await (const e of events) seen.push(e);
  return seen;
}

/** A record at version 4 with message 1 pending, its edit at 5 and its delete at 6 (idle again). */
const ENDPOINT_STREAM = [block('4-1', 'record', RECORD), block('5-1', 'edit', EDIT), block(6, 'delete', DELETE)];

describe('streamEndpointEvents: edit and delete events', () => {
  test('when messageEvents is true, then edits and deletes come typed, between the record events, with the version as id', async () => {
    const { client } = setup(() => eventStream(ENDPOINT_STREAM));

    const events = await collect(client.streamEndpointEvents(ENDPOINT, TOKEN, { messageEvents: true, reconnect: false }));

    expect(events).toEqual([
      { id: 4, type: 'record', record: RECORD, messageNumber: 1 },
      { id: 5, type: 'edit', ...EDIT },
      { id: 6, type: 'delete', ...DELETE },
    ]);
    expectTypeOf(events).toEqualTypeOf<(EndpointEvent | MessageLogEvent)[]>();
    const edit = events[1]!;
    if (edit.type === 'edit') {
      expectTypeOf(edit.ids.chat_d).toEqualTypeOf<string | undefined>();
      expectTypeOf(edit.message.content).toEqualTypeOf<string | null>();
    }
  });

  test('when messageEvents is not given, then edits and deletes are skipped and every event yielded carries a record', async () => {
    const { client } = setup(() => eventStream(ENDPOINT_STREAM));

    const events = await collect(client.streamEndpointEvents(ENDPOINT, TOKEN, { reconnect: false }));

    expect(events.map((e) => [e.id, e.type])).toEqual([[4, 'record']]);
    expectTypeOf(events).toEqualTypeOf<EndpointEvent[]>();
    expect(events[0]!.record).toEqual(RECORD);
  });

  test('when the stream is resumed after a skipped edit, then Last-Event-ID is the last event yielded', async () => {
    const { client, requests } = setup(() => eventStream(ENDPOINT_STREAM));
    let n = 0;
    for await (const _ of client.streamEndpointEvents(ENDPOINT, TOKEN, { retryMs: 1 })) if (++n === 2) break;
    expect(requests.map((r) => r.headers.get('last-event-id'))).toEqual([null, '4']);
  });

  test('when an edit or delete event lacks a member its type needs, then the iteration rejects', async () => {
    for (const [type, data] of [
      ['edit', { ...EDIT, edits: 'one' }],
      ['edit', { ...EDIT, message: undefined }],
      ['delete', { ...DELETE, deleted_at: 7 }],
      ['delete', { ...DELETE, ids: null }],
    ] as const) {
      const { client } = setup(() => eventStream([block(5, type, data)]));
      await expect(collect(client.streamEndpointEvents(ENDPOINT, TOKEN, { messageEvents: true, reconnect: false }))).rejects.toThrow(
        type === 'edit' ? /an edit event without a version id/ : /a delete event without a version id/,
      );
    }
  });

  test('when a stream with message events has event types this client does not know, then they are still skipped', async () => {
    const { client } = setup(() => eventStream([block(4, 'notice', {}), block(5, 'edit', EDIT)]));
    const events = await collect(client.streamEndpointEvents(ENDPOINT, TOKEN, { messageEvents: true, reconnect: false }));
    expect(events.map((e) => e.type)).toEqual(['edit']);
  });

  test('a bot client yields the same events with the same option', async () => {
    const { fetch } = fakeFetch(() => eventStream(ENDPOINT_STREAM));
    const bot = createChatbridgeClient({ baseUrl: BASE_URL, fetch, botKey: 'cbk_key' });
    const events = await collect(bot.streamEndpointEvents(ENDPOINT, { messageEvents: true, reconnect: false }));
    expect(events.map((e) => e.type)).toEqual(['record', 'edit', 'delete']);
    const records = await collect(bot.streamEndpointEvents(ENDPOINT, { reconnect: false }));
    expectTypeOf(records).toEqualTypeOf<EndpointEvent[]>();
  });
});

describe('streamAllEvents: edit and delete events', () => {
  const ALL_STREAM = [
    block(1040, 'reset', { endpoint: null }),
    block(1041, 'edit', { endpoint: ENDPOINT, version: 5, ...EDIT }),
    block(1042, 'delete', { endpoint: ENDPOINT, version: 6, ...DELETE }),
  ];

  test('when messageEvents is true, then edits and deletes come with their endpoint and version, the position as id', async () => {
    const { client } = setup(() => eventStream(ALL_STREAM));

    const events = await collect(client.streamAllEvents({ messageEvents: true, reconnect: false }));

    expect(events).toEqual([
      { id: 1040, type: 'reset', endpoint: null },
      { id: 1041, type: 'edit', endpoint: ENDPOINT, version: 5, ...EDIT },
      { id: 1042, type: 'delete', endpoint: ENDPOINT, version: 6, ...DELETE },
    ]);
    expectTypeOf(events).toEqualTypeOf<(ChangeEvent | MessageChangeEvent)[]>();
  });

  test('when messageEvents is not given, then they are skipped', async () => {
    const { client } = setup(() => eventStream(ALL_STREAM));
    const events = await collect(client.streamAllEvents({ reconnect: false }));
    expect(events.map((e) => e.type)).toEqual(['reset']);
    expectTypeOf(events).toEqualTypeOf<ChangeEvent[]>();
  });

  test('when an edit names no endpoint or version, then the iteration rejects', async () => {
    for (const data of [
      { version: 5, ...EDIT },
      { endpoint: ENDPOINT, ...EDIT },
    ]) {
      const { client } = setup(() => eventStream([block(1041, 'edit', data)]));
      await expect(collect(client.streamAllEvents({ messageEvents: true, reconnect: false }))).rejects.toThrow(
        /an edit event without a numeric id/,
      );
    }
  });
});
