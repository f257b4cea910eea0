// streamEndpointEvents: the Server-Sent Events stream of an endpoint as an async iterable of typed
// events, parsed with eventsource-parser, reconnecting with Last-Event-ID like an EventSource does.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ChatbridgeError } from './errors.ts';
import type { ChatbridgeRawClient } from './raw.ts';
import type { EndpointRecord } from './types.ts';

/** One event of the stream: the endpoint record as of version `id`. */
export interface EndpointEvent {
  /** The record's version: 0 at creation, + 1 with every committed change. */
  id: number;
  /**
   * `record`: the record at this version (the first event of a fresh stream, then every change).
   * `reset`: the current record, sent when the stream resumed from a version the server no longer
   * keeps; the changes in between were missed.
   */
  type: 'record' | 'reset';
  record: EndpointRecord;
}

export interface StreamEventsOptions {
  /** Resume after this version (the `id` of the last event you handled); sent as `Last-Event-ID`. */
  lastEventId?: number | undefined;
  /** Ends the stream: the iteration then rejects with the signal's reason. `break` ends it quietly. */
  signal?: AbortSignal | undefined;
  /**
   * Reconnect when the connection ends or fails, or the server answers 429 or 5xx, resuming after
   * the last event received (default true). Other errors (400, 401, ...) always end the iteration.
   */
  reconnect?: boolean | undefined;
  /**
   * Wait before reconnecting (default 2000 ms) until the server sends a `retry:` field, whose value
   * then takes over, as in an EventSource. Doubles with every attempt that received no event, up to
   * `maxRetryMs`; a `Retry-After` header is honoured.
   */
  retryMs?: number | undefined;
  /** Longest wait between attempts (default 30 s). */
  maxRetryMs?: number | undefined;
  /**
   * A connection that receives nothing for this long (no answer to its request, then no event, not
   * even a heartbeat) is dropped (and reconnected). Default 45 s, three server heartbeats; 0 turns
   * the check off.
   */
  idleTimeoutMs?: number | undefined;
}

const OPERATION = 'streamEndpointEvents';
/** Larger than any record the server accepts, so only a broken stream reaches it. */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/** A stream that is not what the spec describes (not text/event-stream, an event without a record). */
class StreamProtocolError extends Error {
  override readonly name = 'StreamProtocolError';
}

const retryable = (status: number) => status === 429 || status >= 500;

/** How a record operation authenticates: the endpoint's token (query), or a bot key (Authorization header). */
export type RecordCredential = { token: string } | { botKey: string };

export function streamEndpointEvents(
  raw: ChatbridgeRawClient,
  endpoint: string,
  credential: RecordCredential,
  options: StreamEventsOptions = {},
): AsyncIterable<EndpointEvent> {
  return { [Symbol.asyncIterator]: () => run(raw, endpoint, credential, options) };
}

async function* run(raw: ChatbridgeRawClient, endpoint: string, credential: RecordCredential, options: StreamEventsOptions): AsyncGenerator<EndpointEvent, void, undefined> {
  const { signal, reconnect = true, maxRetryMs = 30_000, idleTimeoutMs = 45_000 } = options;
  let lastEventId = options.lastEventId;
  let retryMs = options.retryMs ?? 2000;
  let failures = 0;

  for (;;) {
    signal?.throwIfAborted();
    // Aborted by the caller's signal, the idle check, or the end of this attempt.
    const connection = new AbortController();
    const forward = () => connection.abort(signal?.reason);
    signal?.addEventListener('abort', forward, { once: true });
    let waitAtLeastMs = 0;
    let received = false;
    // Until the answer's head arrives: a server or balancer that accepts and never answers is dropped
    // too (readEvents watches the body after that).
    const unanswered =
      idleTimeoutMs > 0 ? setTimeout(() => connection.abort(new Error(`${OPERATION}: no answer within ${idleTimeoutMs} ms`)), idleTimeoutMs) : undefined;
    try {
      const { response, data, error } = await raw.GET('/events/{endpoint}', {
        params: {
          path: { endpoint },
          query: 'token' in credential ? { token: credential.token } : {},
          ...(lastEventId !== undefined && { header: { 'Last-Event-ID': String(lastEventId) } }),
        },
        headers: { Accept: 'text/event-stream', ...('botKey' in credential && { Authorization: `Bearer ${credential.botKey}` }) },
        parseAs: 'stream',
        signal: connection.signal,
      });
      clearTimeout(unanswered);
      if (!response.ok) {
        const failure = ChatbridgeError.fromResponse(OPERATION, response, error);
        if (!reconnect || !retryable(response.status)) throw failure;
        waitAtLeastMs = retryAfterMs(response) ?? 0;
      } else {
        const type = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
        if (type !== 'text/event-stream' || !data) {
          await data?.cancel().catch(() => undefined);
          throw new StreamProtocolError(`${OPERATION}: expected a text/event-stream response, got ${type ?? 'none'}`);
        }
        const onRetry = (ms: number) => (retryMs = ms);
        for await (const event of readEvents(data, connection, idleTimeoutMs, onRetry)) {
          received = true;
          lastEventId = event.id;
          yield event;
        }
        if (!reconnect) return;
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (!reconnect || error instanceof ChatbridgeError || error instanceof StreamProtocolError) throw error;
      // A network failure or a dropped connection: reconnect.
    } finally {
      clearTimeout(unanswered);
      signal?.removeEventListener('abort', forward);
      connection.abort(); // releases the connection when the caller stops early
    }
    failures = received ? 0 : failures + 1;
    const delay = Math.max(waitAtLeastMs, Math.min(maxRetryMs, retryMs * 2 ** Math.max(0, failures - 1)));
    await sleep(delay, signal);
  }
}

/** Events of one response body, in order; heartbeats and unknown event types are skipped. */
async function* readEvents(
  body: ReadableStream<Uint8Array>,
  connection: AbortController,
  idleTimeoutMs: number,
  onRetry: (ms: number) => void,
): AsyncGenerator<EndpointEvent, void, undefined> {
  const parsed: EventSourceMessage[] = [];
  let overflow = false;
  const parser = createParser({
    onEvent: (message) => parsed.push(message),
    onRetry,
    // Unknown fields and invalid retry values are ignored, as an EventSource ignores them.
    onError: (error) => (overflow ||= error.type === 'max-buffer-size-exceeded'),
    maxBufferSize: MAX_EVENT_CHARS,
  });
  let idle: ReturnType<typeof setTimeout> | undefined;
  const heardFrom = () => {
    if (idleTimeoutMs <= 0) return;
    clearTimeout(idle);
    idle = setTimeout(() => connection.abort(new Error(`${OPERATION}: nothing received for ${idleTimeoutMs} ms`)), idleTimeoutMs);
  };
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    heardFrom();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      heardFrom();
      parser.feed(value);
      if (overflow) {
        throw new StreamProtocolError(`${OPERATION}: an event exceeded ${MAX_EVENT_CHARS} characters`);
      }
      while (parsed.length > 0) {
        const event = toEvent(parsed.shift()!);
        if (event) yield event;
      }
    }
  } finally {
    clearTimeout(idle);
    await reader.cancel().catch(() => undefined);
  }
}

function toEvent(message: EventSourceMessage): EndpointEvent | undefined {
  if (message.event !== 'record' && message.event !== 'reset') return undefined; // from a newer server
  const id = message.id !== undefined && /^\d+$/.test(message.id) ? Number(message.id) : Number.NaN;
  let record: unknown;
  try {
    record = JSON.parse(message.data);
  } catch {
    record = undefined;
  }
  if (!Number.isSafeInteger(id) || typeof record !== 'object' || record === null) {
    throw new StreamProtocolError(`${OPERATION}: a ${message.event} event without a numeric id and a JSON record`);
  }
  return { id, type: message.event, record: record as EndpointRecord };
}

function retryAfterMs(response: Response): number | undefined {
  const value = response.headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
