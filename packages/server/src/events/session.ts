// One event stream: the text/event-stream response of streamEndpointEvents, from the first event to
// the end. Everything it sends comes from the store (the record, or the event log read "after the
// last version sent"); the change feed only says when to look. So whatever notifications arrive,
// late, twice or not at all, the stream sends each version once, in order, and a heartbeat also
// looks, which bounds how long a lost notification can delay an event.
import type { Request, Response } from 'express';
import type { Platform } from '../domain/record.ts';
import { hidesWebhooks, redactedJsonFor } from '../domain/redaction.ts';
import type { Logger } from '../logger.ts';
import type { EndpointEvent, EndpointStore, StoredEndpoint } from '../store/port.ts';
import { messageNumberOf } from '../store/changes.ts';
import { slowStreamOf, waitForDrain } from './slowStreams.ts';
import type { EventStreams } from './streams.ts';

export type EventType = 'record' | 'reset';

/**
 * An event's ID: the record's version, and while a message is pending `-` and its number
 * (`12-5`). The ID is the one field beside `type` and `data` that an EventSource (and every SSE
 * library) hands its caller, and `data` must stay the bare record, so the number travels here. Not
 * `.`: a reader taking the ID for a number would get 12.5, a plausible wrong version; `12-5` is no
 * number at all. A client resuming sends the ID back; only its version counts (resumePoint).
 */
export function eventId(version: number, messageNumber: number | null): string {
  return messageNumber === null ? String(version) : `${version}-${messageNumber}`;
}

/**
 * One event: `id`, `event` and `data` lines, then the empty line that ends it. The record is its
 * JSON text as JSON.stringify wrote it (as a string or as UTF-8 bytes), which escapes line breaks
 * inside strings: it always fits one data line. As bytes, so that what a stream has queued is
 * counted in bytes (see slowStreams.ts).
 */
export function formatEvent(version: number, type: EventType, recordJson: string | Uint8Array, messageNumber: number | null): Buffer {
  const head = `id: ${eventId(version, messageNumber)}\nevent: ${type}\ndata: `;
  if (typeof recordJson === 'string') return Buffer.from(`${head}${recordJson}\n\n`);
  return Buffer.concat([Buffer.from(head), recordJson, EVENT_END]);
}

const EVENT_END = Buffer.from('\n\n');

/**
 * A row's record event, formatted once for every stream that sends it. The SQLite adapter hands the
 * streams of an endpoint the same row object (its row cache), so both streams of a bridged community
 * write the same bytes; a row read anew (PostgreSQL) is formatted by the stream that read it. A row
 * past LARGE_ROW_CHARS is formatted by each stream, in its turn, and not kept: formatting the
 * largest records for twenty streams at once would hold the event loop as twenty reads of the log
 * would, and the cache would hold a second copy of them for as long as the row is cached.
 */
const formattedRows = new WeakMap<StoredEndpoint, Buffer>();
const LARGE_ROW_CHARS = 64 * 1024;

function rowEvent(row: StoredEndpoint): Buffer {
  const kept = formattedRows.get(row);
  if (kept) return kept;
  const bytes = formatEvent(row.version, 'record', row.recordJson, messageNumberOf(row.state));
  if (!isLarge(row)) formattedRows.set(row, bytes);
  return bytes;
}

const isLarge = (row: StoredEndpoint) => row.recordJson.length > LARGE_ROW_CHARS;

/**
 * The row's record event as a `platform` bot key sees it (other platforms' webhook URLs hidden, see
 * domain/redaction.ts): the shared bytes when nothing is hidden, else formatted once per row and
 * platform, as rowEvent is per row, for every bot stream of that platform.
 */
const redactedRows = new WeakMap<StoredEndpoint, Partial<Record<Platform, Buffer>>>();

function rowEventFor(row: StoredEndpoint, platform: Platform | undefined): Buffer {
  if (platform === undefined || !hidesWebhooks(row.record, platform)) return rowEvent(row);
  let kept = redactedRows.get(row);
  const cached = kept?.[platform];
  if (cached) return cached;
  const bytes = formatEvent(row.version, 'record', redactedJsonFor(row.record, row.recordJson, platform), messageNumberOf(row.state));
  if (!isLarge(row)) {
    if (!kept) redactedRows.set(row, (kept = {}));
    kept[platform] = bytes;
  }
  return bytes;
}

export const HEARTBEAT = ': heartbeat\n\n';

/**
 * Where a stream starts: `fresh` (the current record first), `after` a version (or position) the
 * client has, or `unknown` (a Last-Event-ID this stream never issued: answered with a reset).
 */
export type ResumePoint = { kind: 'fresh' } | { kind: 'after'; version: number } | { kind: 'unknown' };

// Leading zeros are allowed, as the query parameters allow them: "04" is 4 either way.
/** An event ID of an endpoint's stream (eventId): the version, then the message number if any. */
const EVENT_ID = /^([0-9]{1,32})(?:-[0-9]{1,32})?$/;
/** An event ID of the stream of all changes: a position. */
const POSITION = /^([0-9]{1,32})$/;

/**
 * Where an endpoint's stream resumes: after the version of the event ID in `Last-Event-ID` (or the
 * `last_event_id` query parameter, of the same form). The header wins over the query parameter: an
 * EventSource that reconnects by itself keeps its URL (with the old query value) and sends its
 * newest ID as the header.
 */
export function resumePoint(header: string | string[] | undefined, query: string | undefined): ResumePoint {
  return resumeFrom(EVENT_ID, header, query);
}

/** Where a stream of all changes resumes: after the position in `Last-Event-ID` (or `last_event_id`), as resumePoint. */
export function resumeAtPosition(header: string | string[] | undefined, query: number | undefined): ResumePoint {
  return resumeFrom(POSITION, header, query === undefined ? undefined : String(query));
}

function resumeFrom(ids: RegExp, header: string | string[] | undefined, query: string | undefined): ResumePoint {
  const value = (Array.isArray(header) ? header.join(',') : header?.trim()) || query;
  if (!value) return { kind: 'fresh' };
  const version = Number(ids.exec(value)?.[1]);
  return Number.isSafeInteger(version) ? { kind: 'after', version } : { kind: 'unknown' };
}

export interface EventStreamOptions {
  store: EndpointStore;
  streams: EventStreams;
  endpointId: string;
  /**
   * Whether the credential the stream was opened with still opens the endpoint, as `row` reads now: checked
   * whenever the stream looks at the store, so a rotated token or key ends it.
   */
  stillAuthorized: (row: StoredEndpoint) => boolean | Promise<boolean>;
  /** The bot whose key opened the stream, if one did: rotating or deleting that key ends it. */
  bot?: string | undefined;
  /** The platform of that bot key: other platforms' webhook URLs are hidden from the stream. */
  platform?: Platform | undefined;
  /** What the stream counts against (EventStreams.track): its endpoint's slots, or a bot key's own budget. */
  budgetKey?: string | undefined;
  resume: ResumePoint;
  req: Request;
  res: Response;
  /** For failures; the request's own logger (`req.log`) is preferred when there is one. */
  logger: Logger;
}

/** Starts the stream (the caller has authenticated the request) and returns at once. */
export function openEventStream(o: EventStreamOptions): void {
  const { store, streams, endpointId, res } = o;
  const { heartbeatMs, retryMs, batchSize, replayBatchBytes, stallMs } = streams.settings;

  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Accel-Buffering', 'no');
  // A stream ends for good reasons only (client gone, token revoked, shutdown), and its client opens
  // a new connection anyway: closing this one then means shutdown never waits on an idle keep-alive.
  res.setHeader('Connection', 'close');
  if (res.locals.head === true) {
    res.end(); // HEAD: the stream's headers, and no session behind a body that cannot be sent
    return;
  }
  res.flushHeaders();
  res.write(`retry: ${retryMs}\n\n`);

  let ended = false;
  let last: number | undefined = o.resume.kind === 'after' ? o.resume.version : undefined;
  let dirty = true;
  let pumping = false;
  /** Since when the stream has waited for its client to take what was written (undefined: not waiting). */
  let stalledSince: number | undefined;
  /** Bytes of the events read from the log and not yet written. */
  let unsent = 0;

  /** This stream as the process-wide budget of slow streams sees it. */
  const slow = slowStreamOf(
    res,
    streams.slow,
    o.req.log ?? o.logger,
    { endpoint: endpointId },
    () => end(),
    () => unsent,
  );

  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    unsubscribe();
    untrack();
    streams.slow.resumed(slow);
    if (!res.writableEnded) res.end();
  };

  const send = (version: number, type: EventType, recordJson: string | Uint8Array, messageNumber: number | null) => {
    res.write(formatEvent(version, type, recordJson, messageNumber));
    last = version;
  };
  /** The record's text as this stream's credential may see it (a bot key: other platforms' webhooks hidden). */
  const platform = o.platform;
  const seen = (from: { record: StoredEndpoint['record']; recordJson: string }): string =>
    platform === undefined ? from.recordJson : redactedJsonFor(from.record, from.recordJson, platform);

  /**
   * A slow client: wait until what was written has gone out before writing more. Nothing more is
   * queued for a socket whose write() returned false; meanwhile the stream counts against the slow
   * streams' budget.
   */
  const drained = () =>
    waitForDrain(
      res,
      streams.slow,
      slow,
      () => ended,
      (since) => (stalledSince = since),
    );

  /** Whether the stream may still send: its endpoint exists and its token or key still opens it. */
  const authorized = async (row: StoredEndpoint | undefined): Promise<boolean> => {
    if (row && (await o.stillAuthorized(row))) return true;
    end(); // deleted, or the token or key was rotated
    return false;
  };

  /**
   * Writes one read of the log, an event at a time, each only once the client has taken the one
   * before (beyond the socket's buffers). Returns false if the stream ended meanwhile.
   */
  const sendAll = async (events: EndpointEvent[]): Promise<boolean> => {
    unsent = events.reduce((sum, e) => sum + e.json.byteLength, 0);
    try {
      for (let event = events.shift(); event !== undefined; event = events.shift()) {
        unsent -= event.json.byteLength;
        send(event.version, 'record', platform === undefined ? event.json : seen(event), event.messageNumber);
        if (!res.writableNeedDrain) continue;
        const before = dirty;
        dirty = false;
        await drained();
        if (ended) return false;
        const noticed = dirty;
        dirty ||= before;
        // A notice arrived while the client read: the token may have been rotated, or the endpoint deleted.
        if (noticed && !(await authorized(await store.endpoints.get(endpointId)))) return false;
      }
      return !ended;
    } finally {
      unsent = 0;
    }
  };

  /** One look at the store: sends what the client has not had yet. Returns true to look again. */
  const look = async (): Promise<boolean> => {
    const row = await store.endpoints.get(endpointId);
    if (ended) return false;
    if (!(await authorized(row)) || ended || !row) return false;
    if (last === undefined && o.resume.kind === 'unknown') {
      send(row.version, 'reset', seen(row), messageNumberOf(row.state));
      return false;
    }
    // The current record (a fresh stream), or the one version the client lacks (a live event): a
    // write commits the row and its event in one transaction with the same record and message
    // number, so the row is that event and the log need not be read.
    if (last === undefined || row.version === last + 1) {
      const sendRow = () => {
        if (ended) return;
        res.write(rowEventFor(row, platform));
        last = row.version;
      };
      if (isLarge(row)) await streams.turns.run(sendRow);
      else sendRow();
      return false;
    }
    if (row.version === last) return false;
    if (row.version < last) {
      send(row.version, 'reset', seen(row), messageNumberOf(row.state)); // an ID this endpoint never issued
      return false;
    }
    // A bounded read: at most `batchSize` events and `replayBatchBytes` of records (one larger
    // record alone), each read once and sent as read, so a replay costs work in proportion to what
    // it sends and holds one read's records at most.
    const after = last;
    const events = await streams.turns.run(() => store.changes.eventsSince(endpointId, after, batchSize, replayBatchBytes));
    if (ended) return false;
    if (events[0]?.version !== last + 1) {
      // What comes next is no longer kept: the client missed changes.
      send(row.version, 'reset', seen(row), messageNumberOf(row.state));
      return true; // events may have committed since `row` was read
    }
    if (!(await sendAll(events))) return false;
    return last < row.version;
  };

  const pump = async () => {
    if (pumping || ended) return;
    pumping = true;
    try {
      while (dirty && !ended) {
        // Looks start in turns of the event loop (turns.ts): other requests are served between two turns.
        await streams.turns.wait();
        if (ended) break;
        dirty = false;
        if (await look()) dirty = true;
        await drained();
      }
    } catch (err) {
      // The store failed: end the stream; the client reconnects and resumes from its last event.
      (o.req.log ?? o.logger).warn({ err, endpoint: endpointId }, 'event stream ended: the store failed');
      end();
    } finally {
      pumping = false;
    }
  };

  const wake = () => {
    dirty = true;
    void pump();
  };

  const unsubscribe = streams.feed.subscribe(endpointId, wake);
  const untrack = streams.track(end, o.budgetKey ?? endpointId, o.bot);
  const heartbeat = setInterval(() => {
    if (stalledSince !== undefined) {
      if (Date.now() - stalledSince >= stallMs) {
        res.destroy(); // what it holds is dropped with the socket; a live client resumes from its last event
        end();
        return;
      }
      // Not written while the client has not taken what was: the queued data keeps proxies from
      // timing out as well, and nothing more is queued for a socket that takes nothing.
    } else {
      res.write(HEARTBEAT);
    }
    wake(); // also re-checks the token and catches anything a lost notification hid
  }, heartbeatMs);
  res.on('close', end);
  // The client may have gone while the request was being authenticated: 'close' has fired already.
  if (streams.closed || res.destroyed || !res.socket || res.socket.destroyed) end();
  else void pump();
}
