import { describe, expect, expectTypeOf, test } from 'vitest';
import { type ChangeEvent, ChatbridgeUsageError } from '../src/index.ts';
import { ADMIN_TOKEN, BASE_URL, ENDPOINT, RECORD, setup } from './helpers.ts';

const change = (id: number, version: number, messageNumber: number | null = null) =>
  `id: ${id}\nevent: change\ndata: ${JSON.stringify({ endpoint: ENDPOINT, version, messageNumber, record: RECORD })}\n\n`;
const reset = (id: number, endpoint: string | null = null) => `id: ${id}\nevent: reset\ndata: ${JSON.stringify({ endpoint })}\n\n`;

/** A text/event-stream response sending `chunks`, then ending, or staying open until aborted. */
function eventStream(request: Request, chunks: string[], { open = false } = {}): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      if (!open) controller.close();
      request.signal.addEventListener('abort', () => {
        try {
          controller.error(request.signal.reason);
        } catch {
          // already closed
        }
      });
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

describe('streamAllEvents', () => {
  test('sends GET /events with the admin token asking for text/event-stream, and yields the typed events', async () => {
    const { client, only } = setup((request) =>
      eventStream(request, ['retry: 2000\n\n', reset(10), change(11, 4, 7), reset(12, ENDPOINT)]),
    );

    const events: ChangeEvent[] = [];
    for await (const e of client.streamAllEvents({ reconnect: false })) events.push(e);

    const request = only();
    expect(request.url).toBe(`${BASE_URL}/events`);
    expect(request.headers.get('authorization')).toBe(`Bearer ${ADMIN_TOKEN}`);
    expect(request.headers.get('accept')).toBe('text/event-stream');
    expect(request.headers.get('last-event-id')).toBeNull();
    expect(events).toEqual([
      { id: 10, type: 'reset', endpoint: null },
      { id: 11, type: 'change', endpoint: ENDPOINT, version: 4, messageNumber: 7, record: RECORD },
      { id: 12, type: 'reset', endpoint: ENDPOINT },
    ]);
    const first = events[1]!;
    if (first.type === 'change') expectTypeOf(first.messageNumber).toEqualTypeOf<number | null>();
  });

  test('when the stream ends, then the client reconnects with Last-Event-ID of the last event and goes on', async () => {
    const { client, requests } = setup((request) => {
      if (requests.length === 1) return eventStream(request, ['retry: 5\n\n', reset(1), change(2, 1)]);
      return eventStream(request, ['retry: 5\n\n', change(3, 2)], { open: true });
    });

    const seen: number[] = [];
    for await (const e of client.streamAllEvents({ lastEventId: 0 })) {
      seen.push(e.id);
      if (e.id === 3) break;
    }

    expect(seen).toEqual([1, 2, 3]);
    expect(requests.map((r) => r.headers.get('last-event-id'))).toEqual(['0', '2']);
  });

  test('when a change event lacks its endpoint, version or record, then the iteration rejects', async () => {
    const { client } = setup((request) => eventStream(request, ['id: 1\nevent: change\ndata: {"endpoint":"x"}\n\n']));
    await expect(async () => {
      for await (const _ of client.streamAllEvents()) break;
    }).rejects.toThrow(/numeric id and its JSON data/);
  });

  test('when the client has no admin token, then it refuses before sending anything', () => {
    const { client, requests } = setup(() => new Response(), { adminToken: undefined });
    expect(() => client.streamAllEvents()).toThrow(ChatbridgeUsageError);
    expect(requests).toHaveLength(0);
  });
});
