// One event stream: the text/event-stream response of streamEndpointEvents, from the first event to
// the end. Everything it sends comes from the store (the record, or the event log read "after the
// last version sent"); the change feed only says when to look. So whatever notifications arrive,
// late, twice or not at all, the stream sends each version once, in order, and a heartbeat also
// looks, which bounds how long a lost notification can delay an event.
import type { Request, Response } from 'express';
import type { EndpointRecord } from '../domain/record.ts';
import type { Logger } from '../logger.ts';
import type { EndpointStore, StoredEndpoint } from '../store/port.ts';
import type { EventStreams } from './streams.ts';

export type EventType = 'record' | 'reset';

/** One event: `id`, `event` and `data` lines, then the empty line that ends it. */
export const formatEvent = (version: number, type: EventType, record: EndpointRecord): string =>
  // JSON.stringify escapes line breaks inside strings, so the record always fits one data line.
  `id: ${version}\nevent: ${type}\ndata: ${JSON.stringify(record)}\n\n`;

export const HEARTBEAT = ': heartbeat\n\n';

/**
 * Where a stream starts: `fresh` (the current record first), `after` a version the client has, or
 * `unknown` (a Last-Event-ID that is no version at all: answered with a reset).
 */
export type ResumePoint = { kind: 'fresh' } | { kind: 'after'; version: number } | { kind: 'unknown' };

// Leading zeros are allowed, as the `last_event_id` query parameter's integer allows them: "04" is 4 either way.
const VERSION = /^[0-9]{1,32}$/;

/**
 * The `Last-Event-ID` header wins over the `last_event_id` query parameter: an EventSource that
 * reconnects by itself keeps its URL (with the old query value) and sends its newest ID as the header.
 */
export function resumePoint(header: string | string[] | undefined, query: number | undefined): ResumePoint {
  const value = Array.isArray(header) ? header.join(',') : header?.trim();
  if (value) {
    const version = VERSION.test(value) ? Number(value) : Number.NaN;
    return Number.isSafeInteger(version) ? { kind: 'after', version } : { kind: 'unknown' };
  }
  return query === undefined ? { kind: 'fresh' } : { kind: 'after', version: query };
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
  resume: ResumePoint;
  req: Request;
  res: Response;
  /** For failures; the request's own logger (`req.log`) is preferred when there is one. */
  logger: Logger;
}

/** Starts the stream (the caller has authenticated the request) and returns at once. */
export function openEventStream(o: EventStreamOptions): void {
  const { store, streams, endpointId, res } = o;
  const { heartbeatMs, retryMs, batchSize, stallMs } = streams.settings;

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

  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    unsubscribe();
    untrack();
    if (!res.writableEnded) res.end();
  };

  const send = (version: number, type: EventType, record: EndpointRecord) => {
    res.write(formatEvent(version, type, record));
    last = version;
  };

  /** A slow client: wait until what was written has gone out before reading more. */
  const drained = () =>
    !res.writableNeedDrain || ended
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          stalledSince = Date.now();
          const done = () => {
            stalledSince = undefined;
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        });

  /** One look at the store: sends what the client has not had yet. Returns true to look again. */
  const look = async (): Promise<boolean> => {
    const row = await store.get(endpointId);
    if (ended) return false;
    if (!row || !(await o.stillAuthorized(row))) {
      end(); // deleted, or the token or key was rotated
      return false;
    }
    if (ended) return false;
    if (last === undefined) {
      send(row.version, o.resume.kind === 'unknown' ? 'reset' : 'record', row.record);
      return false;
    }
    if (row.version === last) return false;
    if (row.version < last) {
      send(row.version, 'reset', row.record); // an ID this endpoint never issued
      return false;
    }
    const events = await store.eventsSince(endpointId, last, batchSize);
    if (ended) return false;
    if (events[0]?.version !== last + 1) {
      // What comes next is no longer kept: the client missed changes.
      send(row.version, 'reset', row.record);
      return true; // events may have committed since `row` was read
    }
    for (const event of events) {
      send(event.version, 'record', event.record);
      // Only as much as the socket takes: a client that does not read holds one event in this
      // process, not a whole batch of them (records can be a few hundred KB each).
      if (res.writableNeedDrain) return true;
    }
    return events.length === batchSize;
  };

  const pump = async () => {
    if (pumping || ended) return;
    pumping = true;
    try {
      while (dirty && !ended) {
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
  const untrack = streams.track(end, endpointId, o.bot);
  const heartbeat = setInterval(() => {
    if (stalledSince !== undefined && Date.now() - stalledSince >= stallMs) {
      res.destroy(); // what it holds is dropped with the socket; a live client resumes from its last event
      end();
      return;
    }
    res.write(HEARTBEAT);
    wake(); // also re-checks the token and catches anything a lost notification hid
  }, heartbeatMs);
  res.on('close', end);
  // The client may have gone while the request was being authenticated: 'close' has fired already.
  if (streams.closed || res.destroyed || !res.socket || res.socket.destroyed) end();
  else void pump();
}
