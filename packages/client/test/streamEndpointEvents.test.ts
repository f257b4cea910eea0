import { describe, expect, expectTypeOf, test } from 'vitest';
import { ChatbridgeError, ChatbridgeUsageError, type EndpointEvent } from '../src/index.ts';
import { BASE_URL, ENDPOINT, PROBLEMS, RECORD, TOKEN, problemResponse, setup } from './helpers.ts';

const RESET_RECORD = { ...RECORD, config: { ...RECORD.config, blacklist: ['reset'] } };

const event = (id: number | string, record: unknown = RECORD, type = 'record') =>
  `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(record)}\n\n`;

interface StreamControl {
  response: Response;
  /** Resolves when the client cancelled the body (stopped reading). */
  cancelled: Promise<void>;
}

/**
 * A text/event-stream response that sends `chunks` and then ends (or, with `open`, stays open until
 * the request is aborted or the body cancelled, as a live stream does).
 */
function eventStream(request: Request, chunks: string[], { open = false } = {}): StreamControl {
  let onCancel!: () => void;
  const cancelled = new Promise<void>((resolve) => (onCancel = resolve));
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
    cancel() {
      onCancel();
    },
  });
  return { response: new Response(body, { headers: { 'content-type': 'text/event-stream' } }), cancelled };
}

/** Collects every event of an iteration that ends by itself. */
async function collect(events: AsyncIterable<EndpointEvent>): Promise<EndpointEvent[]> {
  const seen: EndpointEvent[] = [];
  for await (const e of events) seen.push(e);
  return seen;
}

describe('streamEndpointEvents', () => {
  test('sends GET /events/{endpoint}?token= asking for text/event-stream, and yields the typed events of the stream', async () => {
    const { client, only } = setup((request) => eventStream(request, ['retry: 2000\n\n', event(0), ': heartbeat\n\n', event(1)]).response);

    const events = await collect(client.streamEndpointEvents(ENDPOINT, TOKEN, { reconnect: false }));

    const request = only();
    expect(request.method).toBe('GET');
    expect(request.url).toBe(`${BASE_URL}/events/${ENDPOINT}?token=${TOKEN}`);
    expect(request.headers.get('accept')).toBe('text/event-stream');
    expect(request.headers.get('last-event-id')).toBeNull();
    expect(request.headers.get('authorization')).toBeNull();
    expect(events).toEqual([
      { id: 0, type: 'record', record: RECORD, messageNumber: null },
      { id: 1, type: 'record', record: RECORD, messageNumber: null },
    ]);
    expectTypeOf(events[0]!).toEqualTypeOf<EndpointEvent>();
    expectTypeOf(events[0]!.type).toEqualTypeOf<'record' | 'reset'>();
  });

  test('when an event ID carries a message number (5-3), then the event has the version as id and that messageNumber; a plain ID, null', async () => {
    const { client } = setup(
      (request) => eventStream(request, [event('5-3'), event(6), event('0012-0040', RESET_RECORD, 'reset')]).response,
    );

    const events = await collect(client.streamEndpointEvents(ENDPOINT, TOKEN, { reconnect: false }));

    expect(events).toEqual([
      { id: 5, type: 'record', record: RECORD, messageNumber: 3 },
      { id: 6, type: 'record', record: RECORD, messageNumber: null },
      { id: 12, type: 'reset', record: RESET_RECORD, messageNumber: 40 },
    ]);
    expectTypeOf(events[0]!.id).toEqualTypeOf<number>();
    expectTypeOf(events[0]!.messageNumber).toEqualTypeOf<number | null>();
  });

  test('when a 1.0.0 server sends the number as a messageNumber field beside data, then the event carries it too', async () => {
    const pending = `id: 5\nevent: record\nmessageNumber: 3\ndata: ${JSON.stringify(RECORD)}\n\n`;
    const idle = `id: 6\nevent: record\nmessageNumber: null\ndata: ${JSON.stringify(RECORD)}\n\n`;
    const { client } = setup((request) => eventStream(request, [pending, idle]).response);

    const events = await collect(client.streamEndpointEvents(ENDPOINT, TOKEN, { reconnect: false }));

    expect(events.map((e) => [e.id, e.messageNumber])).toEqual([
      [5, 3],
      [6, null],
    ]);
  });

  test('when lastEventId is given, then it is sent as the Last-Event-ID header', async () => {
    const { client, only } = setup((request) => eventStream(request, [event(42)]).response);

    await collect(client.streamEndpointEvents(ENDPOINT, TOKEN, { lastEventId: 41, reconnect: false }));

    expect(only().headers.get('last-event-id')).toBe('41');
  });

  test('when the stream arrives one character at a time, with CRLF line ends, then the same events are parsed', async () => {
    const text = `retry: 10\r\n\r\n${event(7, RECORD).replaceAll('\n', '\r\n')}: heartbeat\r\n\r\n${event(8, RESET_RECORD, 'reset')}`;
    const { client } = setup((request) => eventStream(request, [...text]).response);

    const events = await collect(client.streamEndpointEvents(ENDPOINT, TOKEN, { reconnect: false }));

    expect(events).toEqual([
      { id: 7, type: 'record', record: RECORD, messageNumber: null },
      { id: 8, type: 'reset', record: RESET_RECORD, messageNumber: null },
    ]);
  });

  test('when the stream has event types this client does not know, then they are skipped', async () => {
    const { client } = setup(
      (request) => eventStream(request, ['event: notice\ndata: {}\n\n', 'data: plain message\n\n', event(3)]).response,
    );

    expect((await collect(client.streamEndpointEvents(ENDPOINT, TOKEN, { reconnect: false }))).map((e) => e.id)).toEqual([3]);
  });

  test('when a record event has no version id or no JSON record, then the iteration rejects', async () => {
    for (const id of ['x', '1.5', '1-', '1-2-3']) {
      const { client } = setup((request) => eventStream(request, [`id: ${id}\nevent: record\ndata: {}\n\n`]).response);
      await expect(collect(client.streamEndpointEvents(ENDPOINT, TOKEN))).rejects.toThrow(/version id and a JSON record/);
    }

    const second = setup((request) => eventStream(request, ['id: 1\nevent: record\ndata: not json\n\n']).response);
    await expect(collect(second.client.streamEndpointEvents(ENDPOINT, TOKEN))).rejects.toThrow(/version id and a JSON record/);
  });

  test('when the stream ends, then the client reconnects after the server-sent retry delay with Last-Event-ID of the last event', async () => {
    const { client, requests } = setup((request) => {
      if (requests.length === 1) return eventStream(request, ['retry: 5\n\n', event(1), event('2-9')]).response;
      return eventStream(request, ['retry: 5\n\n', event(3)], { open: true }).response;
    });

    const seen: number[] = [];
    for await (const e of client.streamEndpointEvents(ENDPOINT, TOKEN)) {
      seen.push(e.id);
      if (e.id === 3) break;
    }

    expect(seen).toEqual([1, 2, 3]);
    // The version alone resumes: the server reads only the version of an ID.
    expect(requests.map((r) => r.headers.get('last-event-id'))).toEqual([null, '2']);
  });

  test('when the network fails or the server answers 503, then the client retries with the same Last-Event-ID', async () => {
    const { client, requests } = setup((request) => {
      if (requests.length === 1) return Promise.reject(new TypeError('fetch failed'));
      if (requests.length === 2) return problemResponse({ ...PROBLEMS.unauthorized, status: 503, title: 'Service unavailable' });
      return eventStream(request, [event(10)], { open: true }).response;
    });

    for await (const e of client.streamEndpointEvents(ENDPOINT, TOKEN, { lastEventId: 9, retryMs: 1 })) {
      expect(e.id).toBe(10);
      break;
    }

    expect(requests).toHaveLength(3);
    expect(requests.map((r) => r.headers.get('last-event-id'))).toEqual(['9', '9', '9']);
  });

  test('when the server answers 401, then the iteration rejects with ChatbridgeError and does not retry', async () => {
    const { client, requests } = setup(() => problemResponse(PROBLEMS.unauthorized));

    const error = await collect(client.streamEndpointEvents(ENDPOINT, TOKEN, { retryMs: 1 })).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ChatbridgeError);
    expect(error).toMatchObject({ status: 401, operationId: 'streamEndpointEvents', problem: PROBLEMS.unauthorized });
    expect(requests).toHaveLength(1);
  });

  test('when reconnect is false, then a 503 rejects at once', async () => {
    const { client, requests } = setup(() => problemResponse({ ...PROBLEMS.unauthorized, status: 503, title: 'Service unavailable' }));

    await expect(collect(client.streamEndpointEvents(ENDPOINT, TOKEN, { reconnect: false }))).rejects.toMatchObject({ status: 503 });
    expect(requests).toHaveLength(1);
  });

  test('when the response is not text/event-stream, then the iteration rejects without retrying', async () => {
    const { client, requests } = setup(() => Response.json(RECORD));

    await expect(collect(client.streamEndpointEvents(ENDPOINT, TOKEN, { retryMs: 1 }))).rejects.toThrow(
      /expected a text\/event-stream response, got application\/json/,
    );
    expect(requests).toHaveLength(1);
  });

  test('when the caller breaks out of the loop, then the body is cancelled and nothing more is requested', async () => {
    let control: StreamControl | undefined;
    const { client, requests } = setup((request) => {
      control = eventStream(request, [event(1), event(2)], { open: true });
      return control.response;
    });

    for await (const e of client.streamEndpointEvents(ENDPOINT, TOKEN, { retryMs: 1 })) {
      if (e.id === 1) break;
    }

    await control!.cancelled;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(requests).toHaveLength(1);
  });

  test('when the signal aborts, then the iteration rejects with its reason and the request is aborted', async () => {
    const controller = new AbortController();
    const { client, only } = setup((request) => eventStream(request, [event(1)], { open: true }).response);

    const seen: number[] = [];
    const iteration = (async () => {
      for await (const e of client.streamEndpointEvents(ENDPOINT, TOKEN, { signal: controller.signal })) {
        seen.push(e.id);
        controller.abort(new Error('stop'));
      }
    })();

    await expect(iteration).rejects.toThrow('stop');
    expect(seen).toEqual([1]);
    expect(only().signal.aborted).toBe(true);
  });

  test('when nothing arrives for idleTimeoutMs, then the connection is dropped and reopened', async () => {
    const { client, requests } = setup((request) =>
      requests.length === 1
        ? eventStream(request, [event(1)], { open: true }).response // then silence
        : eventStream(request, [event(2)], { open: true }).response,
    );

    const seen: number[] = [];
    for await (const e of client.streamEndpointEvents(ENDPOINT, TOKEN, { idleTimeoutMs: 50, retryMs: 1 })) {
      seen.push(e.id);
      if (e.id === 2) break;
    }

    expect(seen).toEqual([1, 2]);
    expect(requests[0]!.signal.aborted).toBe(true);
    expect(requests[1]!.headers.get('last-event-id')).toBe('1');
  });

  test('when the server accepts the request but never answers, then after idleTimeoutMs it is dropped and reopened', async () => {
    const { client, requests } = setup((request) =>
      requests.length === 1
        ? new Promise<Response>((_, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason)))
        : eventStream(request, [event(2)], { open: true }).response,
    );

    const seen: number[] = [];
    for await (const e of client.streamEndpointEvents(ENDPOINT, TOKEN, { idleTimeoutMs: 50, retryMs: 1 })) {
      seen.push(e.id);
      break;
    }

    expect(seen).toEqual([2]);
    expect(requests[0]!.signal.aborted).toBe(true);
  });

  test.each(['', '.', '..'])('refuses endpoint ID %j before sending', (id) => {
    const { client, requests } = setup(() => Response.json(RECORD));

    expect(() => client.streamEndpointEvents(id, TOKEN)).toThrow(ChatbridgeUsageError);
    expect(requests).toHaveLength(0);
  });

  test('sends nothing until the iteration starts', async () => {
    const { client, requests } = setup((request) => eventStream(request, [event(1)]).response);

    const events = client.streamEndpointEvents(ENDPOINT, TOKEN, { reconnect: false });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(requests).toHaveLength(0);
    expect((await collect(events)).map((e) => e.id)).toEqual([1]);
  });
});
