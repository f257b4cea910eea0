// One event stream: the text/event-stream response of streamEndpointEvents, from the first event to
// the end. Everything it sends comes from the store (the record, or the event log read "after the
// last version sent"); the change feed only says when to look. So whatever notifications arrive,
// late, twice or not at all, the stream sends each version once, in order, and a heartbeat also
// looks, which bounds how long a lost notification can delay an event.
import type { Request, Response } from 'express';
import type { Platform } from '../domain/record.ts';
import type { Logger } from '../logger.ts';
import type { EndpointEvent, EndpointStore, StoredEndpoint } from '../store/port.ts';
import { messageNumberOf } from '../store/rows.ts';
import { type EventType, formatEvent, isLarge, recordSeenBy, rowEventFor } from './endpointEvents.ts';
import type { ResumePoint } from './resume.ts';
import { slowStreamOf, waitForDrain } from './slowStreams.ts';
import type { EventStreams } from './streams.ts';

export const HEARTBEAT = ': heartbeat\n\n';

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
  const platform = o.platform;
  const seen = (from: { record: StoredEndpoint['record']; recordJson: string }): string => recordSeenBy(from, platform);

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
    unsent = events.reduce((sum, e) => sum + e.recordJsonBytes, 0);
    try {
      for (let event = events.shift(); event !== undefined; event = events.shift()) {
        unsent -= event.recordJsonBytes;
        send(event.version, 'record', platform === undefined ? event.recordJsonUtf8 : seen(event), event.messageNumber);
        if (!res.writableNeedDrain) continue;
        const before = dirty;
        dirty = false;
        await drained();
        if (ended) return false;
        const noticed = dirty;
        dirty ||= before;
        // A notice arrived while the client read: the token may have been rotated, or the endpoint deleted.
        if (noticed && !(await authorized(await store.get(endpointId)))) return false;
      }
      return !ended;
    } finally {
      unsent = 0;
    }
  };

  /** One look at the store: sends what the client has not had yet. Returns true to look again. */
  const look = async (): Promise<boolean> => {
    const row = await store.get(endpointId);
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
    const events = await streams.turns.run(() => store.eventsSince(endpointId, after, batchSize, replayBatchBytes));
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
