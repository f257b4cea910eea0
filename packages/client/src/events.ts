// The Server-Sent Events streams as async iterables of typed events, parsed with eventsource-parser,
// reconnecting with Last-Event-ID like an EventSource does: streamEndpointEvents (one endpoint) and
// streamAllEvents (every endpoint, for bots that serve many communities).
//
// `edit` and `delete` events are yielded only when the caller asks for them (`messageEvents: true`):
// code written when every event carried a record reads `event.record` without looking at the type,
// and would fail on an event that has none. Every other unknown event type is skipped, so a newer
// server's events never break an older client.
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ChatbridgeError } from './errors.ts';
import type { ChatbridgeRawClient } from './raw.ts';
import type { EndpointRecord, Message, MessageIds } from './types.ts';

/** One event of the stream: the endpoint record as of version `id`. */
export interface EndpointEvent {
  /**
   * The record's version: 0 at creation, + 1 with every committed change. Resume after it with
   * `lastEventId`. (On the wire the event ID also carries the message number: `12-5`.)
   */
  id: number;
  /**
   * `record`: the record at this version (the first event of a fresh stream, then every change).
   * `reset`: the current record, sent when the stream resumed from a version the server no longer
   * keeps; the changes in between were missed.
   */
  type: 'record' | 'reset';
  record: EndpointRecord;
  /**
   * The pending message's number as of this version (name it in `markRead` after relaying the
   * message), or null when no message is pending.
   */
  messageNumber: number | null;
}

/**
 * One event of the stream of all changes. `id` is its position in the service's change log: resume
 * after it with `lastEventId`.
 * - `change`: `endpoint` changed to `version`; `record` and `messageNumber` as of that version.
 * - `reset`: changes were missed: of `endpoint` (its replay window no longer keeps that change; read
 *   it again with getEndpoint), or, when `endpoint` is null, of any endpoint (the stream started, or
 *   resumed from a position older than the change window): read again what you need.
 */
export type ChangeEvent =
  | { id: number; type: 'change'; endpoint: string; version: number; messageNumber: number | null; record: EndpointRecord }
  | { id: number; type: 'reset'; endpoint: string | null };

/**
 * A message of the log was edited (`editMessage`), as `streamEndpointEvents` yields it with
 * `messageEvents: true`. `id` is the endpoint's version, as a record event's: resume after it.
 */
export interface MessageEditEvent {
  id: number;
  type: 'edit';
  /** The edited message's number in the log. */
  number: number;
  /** Its ID on each platform: a bot edits its own platform's copy, `ids[<its platform>]`. */
  ids: MessageIds;
  /** The message as it now reads. */
  message: Message;
  /** How many times it has been edited, this edit included (at most 100). */
  edits: number;
  /** When this edit was accepted (ISO 8601). */
  edited_at: string;
}

/**
 * A message of the log was deleted (`deleteMessage`), as `streamEndpointEvents` yields it with
 * `messageEvents: true`: a bot deletes its own platform's copy, `ids[<its platform>]`.
 */
export interface MessageDeleteEvent {
  id: number;
  type: 'delete';
  number: number;
  ids: MessageIds;
  /** When the delete was accepted (ISO 8601). */
  deleted_at: string;
}

/** The message events of `streamEndpointEvents` (with `messageEvents: true`). */
export type MessageLogEvent = MessageEditEvent | MessageDeleteEvent;

/**
 * The message events of `streamAllEvents` (with `messageEvents: true`): those of
 * `streamEndpointEvents`, with the endpoint and its version; `id` is the position in the change log.
 */
export type MessageChangeEvent =
  | (MessageEditEvent & { endpoint: string; version: number })
  | (MessageDeleteEvent & { endpoint: string; version: number });

export interface StreamEventsOptions {
  /** Resume after this version (the `id` of the last event you handled); sent as `Last-Event-ID`. */
  lastEventId?: number | undefined;
  /**
   * Also yield the `edit` and `delete` events of messages (`MessageEditEvent`, `MessageDeleteEvent`;
   * on `streamAllEvents`, `MessageChangeEvent`). Off by default: without it they are skipped, and
   * every event yielded carries a record, as before they existed.
   */
  messageEvents?: boolean | undefined;
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

/** Larger than any record the server accepts, so only a broken stream reaches it. */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/** A stream that is not what the spec describes (not text/event-stream, an event without a record). */
class StreamProtocolError extends Error {
  override readonly name = 'StreamProtocolError';
}

const retryable = (status: number) => status === 429 || status >= 500;

/** A parsed event and the fields beside `data` it carried that no SSE client knows (a 1.0.0 server's `messageNumber`). */
type Parsed = EventSourceMessage & { extra: Record<string, string> };

/** How one stream is opened and its events read: the operation, its request, its events. */
interface StreamKind<E> {
  operation: string;
  open(
    lastEventId: number | undefined,
    signal: AbortSignal,
  ): Promise<{ response: Response; data?: ReadableStream<Uint8Array> | null | undefined; error?: unknown }>;
  toEvent(message: Parsed): E | undefined;
}

/** How a record operation authenticates: the endpoint's token (query), or a bot key (Authorization header). */
export type RecordCredential = { token: string } | { botKey: string };

export function streamEndpointEvents(
  raw: ChatbridgeRawClient,
  endpoint: string,
  credential: RecordCredential,
  options: StreamEventsOptions = {},
): AsyncIterable<EndpointEvent | MessageLogEvent> {
  const messageEvents = options.messageEvents === true;
  const kind: StreamKind<EndpointEvent | MessageLogEvent> = {
    operation: 'streamEndpointEvents',
    open: (lastEventId, signal) =>
      raw.GET('/events/{endpoint}', {
        params: {
          path: { endpoint },
          query: 'token' in credential ? { token: credential.token } : {},
          ...(lastEventId !== undefined && { header: { 'Last-Event-ID': String(lastEventId) } }),
        },
        headers: { Accept: 'text/event-stream', ...('botKey' in credential && { Authorization: `Bearer ${credential.botKey}` }) },
        parseAs: 'stream',
        signal,
      }),
    toEvent: (message) => toEndpointEvent(message, messageEvents),
  };
  return { [Symbol.asyncIterator]: () => run(kind, options) };
}

/** The stream of all changes (`GET /events`), authorised by `authorization` (`Bearer <bot key or admin token>`). */
export function streamAllEvents(
  raw: ChatbridgeRawClient,
  authorization: string,
  options: StreamEventsOptions = {},
): AsyncIterable<ChangeEvent | MessageChangeEvent> {
  const messageEvents = options.messageEvents === true;
  const kind: StreamKind<ChangeEvent | MessageChangeEvent> = {
    operation: 'streamAllEvents',
    open: (lastEventId, signal) =>
      raw.GET('/events', {
        params: lastEventId !== undefined ? { header: { 'Last-Event-ID': String(lastEventId) } } : {},
        headers: { Accept: 'text/event-stream', Authorization: authorization },
        parseAs: 'stream',
        signal,
      }),
    toEvent: (message) => toChangeEvent(message, messageEvents),
  };
  return { [Symbol.asyncIterator]: () => run(kind, options) };
}

async function* run<E extends { id: number }>(kind: StreamKind<E>, options: StreamEventsOptions): AsyncGenerator<E, void, undefined> {
  const OPERATION = kind.operation;
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
      idleTimeoutMs > 0
        ? setTimeout(() => connection.abort(new Error(`${OPERATION}: no answer within ${idleTimeoutMs} ms`)), idleTimeoutMs)
        : undefined;
    try {
      const { response, data, error } = await kind.open(lastEventId, connection.signal);
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
        for await (const event of readEvents(kind, data, connection, idleTimeoutMs, onRetry)) {
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
async function* readEvents<E>(
  kind: StreamKind<E>,
  body: ReadableStream<Uint8Array>,
  connection: AbortController,
  idleTimeoutMs: number,
  onRetry: (ms: number) => void,
): AsyncGenerator<E, void, undefined> {
  const OPERATION = kind.operation;
  const parsed: Parsed[] = [];
  let overflow = false;
  /** Fields of the event being read that eventsource-parser does not know (it reports them as errors). */
  let extra: Record<string, string> = {};
  const parser = createParser({
    onEvent: (message) => {
      parsed.push({ ...message, extra });
      extra = {};
    },
    onRetry,
    // Unknown fields are kept for the event they belong to; invalid retry values are ignored, as an
    // EventSource ignores them.
    onError: (error) => {
      if (error.type === 'unknown-field' && error.field !== undefined && error.value !== undefined) extra[error.field] = error.value;
      overflow ||= error.type === 'max-buffer-size-exceeded';
    },
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
        const event = kind.toEvent(parsed.shift()!);
        if (event) yield event;
      }
    }
  } finally {
    clearTimeout(idle);
    await reader.cancel().catch(() => undefined);
  }
}

const idOf = (message: EventSourceMessage) => (message.id !== undefined && /^\d+$/.test(message.id) ? Number(message.id) : Number.NaN);

/** An event ID of an endpoint's stream: `<version>`, or `<version>-<message number>` while a message is pending. */
const ENDPOINT_EVENT_ID = /^(\d+)(?:-(\d+))?$/;

function jsonOf(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isMessageNumber = (value: unknown): value is number | null => value === null || Number.isSafeInteger(value);

const anEvent = (type: string) => `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type} event`;

/** `edit` or `delete`, when the caller asked for message events; undefined for every other type. */
function messageEventType(message: Parsed, messageEvents: boolean): 'edit' | 'delete' | undefined {
  return messageEvents && (message.event === 'edit' || message.event === 'delete') ? message.event : undefined;
}

/**
 * The members an `edit` or `delete` event's data has on both streams, checked; undefined when one is
 * missing or of the wrong type.
 */
function messageMembers(type: 'edit' | 'delete', data: Record<string, unknown>) {
  const { number, ids } = data;
  if (!Number.isSafeInteger(number) || !isObject(ids)) return undefined;
  const known = { number: number as number, ids: ids as MessageIds };
  if (type === 'delete') {
    return typeof data.deleted_at === 'string' ? { ...known, type, deleted_at: data.deleted_at } : undefined;
  }
  const { message, edits, edited_at } = data;
  if (!isObject(message) || !Number.isSafeInteger(edits) || typeof edited_at !== 'string') return undefined;
  return { ...known, type, message: message as unknown as Message, edits: edits as number, edited_at };
}

function toEndpointEvent(message: Parsed, messageEvents: boolean): EndpointEvent | MessageLogEvent | undefined {
  const [, version, inId] = ENDPOINT_EVENT_ID.exec(message.id ?? '') ?? [];
  const id = Number(version);
  const type = messageEventType(message, messageEvents);
  if (type !== undefined) {
    const data = jsonOf(message.data);
    const members = Number.isSafeInteger(id) && isObject(data) ? messageMembers(type, data) : undefined;
    if (!members) throw new StreamProtocolError(`streamEndpointEvents: ${anEvent(type)} without a version id and its JSON data`);
    return { id, ...members };
  }
  if (message.event !== 'record' && message.event !== 'reset') return undefined; // from a newer server
  const record = jsonOf(message.data);
  if (!Number.isSafeInteger(id) || !isObject(record)) {
    throw new StreamProtocolError(`streamEndpointEvents: a ${message.event} event without a version id and a JSON record`);
  }
  // A 1.0.0 server sends the number as a field of its own beside `data` (which generic SSE clients drop).
  const number = inId === undefined ? jsonOf(message.extra.messageNumber) : Number(inId);
  return { id, type: message.event, record: record as unknown as EndpointRecord, messageNumber: isMessageNumber(number) ? number : null };
}

function toChangeEvent(message: Parsed, messageEvents: boolean): ChangeEvent | MessageChangeEvent | undefined {
  const type = messageEventType(message, messageEvents);
  if (type === undefined && message.event !== 'change' && message.event !== 'reset') return undefined; // from a newer server
  const id = idOf(message);
  const data = jsonOf(message.data);
  const fail = () =>
    new StreamProtocolError(`streamAllEvents: ${anEvent(message.event ?? 'message')} without a numeric id and its JSON data`);
  if (!Number.isSafeInteger(id) || !isObject(data)) throw fail();
  if (type !== undefined) {
    const { endpoint, version } = data;
    const members = messageMembers(type, data);
    if (typeof endpoint !== 'string' || !Number.isSafeInteger(version) || !members) throw fail();
    return { id, endpoint, version: version as number, ...members };
  }
  if (message.event === 'reset') {
    if (data.endpoint !== null && typeof data.endpoint !== 'string') throw fail();
    return { id, type: 'reset', endpoint: data.endpoint };
  }
  const { endpoint, version, messageNumber, record } = data;
  if (typeof endpoint !== 'string' || !Number.isSafeInteger(version) || !isMessageNumber(messageNumber) || !isObject(record)) throw fail();
  return { id, type: 'change', endpoint, version: version as number, messageNumber, record: record as unknown as EndpointRecord };
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
