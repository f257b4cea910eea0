// One stream of all changes: the text/event-stream response of streamAllEvents. As the per-endpoint
// stream (endpointStream.ts), everything it sends comes from the store (the change log, read after the
// last position sent) and the change feed only says when to look; here the reads are shared by the
// instance's streams (changeReader.ts). A stream writes an event only once its client has taken the
// one before (beyond the socket's buffers), counts against the slow streams' budget while it waits,
// and is ended when it has waited `stallMs`.
import type { Request, Response } from 'express';
import { takesPart } from '../domain/botRights.ts';
import type { Platform } from '../domain/record.ts';
import type { Logger } from '../logger.ts';
import { changeSeenBy } from './botChanges.ts';
import { type FormattedChange, formatReset } from './changeReader.ts';
import { type ResumePoint, resumeFrom } from './resume.ts';
import { HEARTBEAT } from './eventStream.ts';
import { slowStreamOf, waitForDrain } from './slowStreams.ts';
import type { EventStreams } from './streams.ts';
import type { EndpointStore } from '../store/port.ts';

/** An event ID of the stream of all changes: a position. */
const POSITION = /^([0-9]{1,32})$/;

/** Where a stream of all changes resumes: after the position in `Last-Event-ID` (or `last_event_id`; the header wins, see resume.ts). */
export function resumeAtPosition(header: string | string[] | undefined, query: number | undefined): ResumePoint {
  return resumeFrom(POSITION, header, query === undefined ? undefined : String(query));
}

export interface AllChangesStreamOptions {
  store: EndpointStore;
  streams: EventStreams;
  /** The key the stream counts under for the per-credential limit (EventStreams.track). */
  key: string;
  /** The bot whose key opened the stream, if one did: rotating or deleting that key ends it. */
  bot?: string | undefined;
  /** That bot key's platform: the stream sends only endpoints where it takes part, their other webhooks hidden. */
  platform?: Platform | undefined;
  /** Whether the credential the stream was opened with still opens it; checked at every heartbeat. */
  stillAllowed: () => Promise<boolean>;
  resume: ResumePoint;
  req: Request;
  res: Response;
  logger: Logger;
}

/** Starts the stream (the caller has authorised it) and returns at once. */
export function openAllChangesStream(o: AllChangesStreamOptions): void {
  const { streams, res } = o;
  const { heartbeatMs, retryMs, stallMs } = streams.settings;
  const reader = streams.allChanges(o.store);

  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Accel-Buffering', 'no');
  res.setHeader('Connection', 'close'); // as eventStream.ts: shutdown never waits on a stream's keep-alive
  if (res.locals.head === true) {
    res.end();
    return;
  }
  res.flushHeaders();
  res.write(`retry: ${retryMs}\n\n`);

  let ended = false;
  /** The position of the last event sent; undefined until the first (a fresh or unknown start). */
  let last: number | undefined = o.resume.kind === 'after' ? o.resume.version : undefined;
  let dirty = true;
  let pumping = false;
  let stalledSince: number | undefined;

  const slow = slowStreamOf(res, streams.slow, o.req.log ?? o.logger, { stream: 'all' }, () => end());

  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    unsubscribe();
    untrack();
    streams.slow.resumed(slow);
    if (!res.writableEnded) res.end();
  };

  const drained = () =>
    waitForDrain(
      res,
      streams.slow,
      slow,
      () => ended,
      (since) => (stalledSince = since),
    );

  /** A change as the bot stream sends it (null: not at all); a reset of one endpoint only if the platform takes part there now. */
  const seenByBot = async (change: FormattedChange, platform: Platform): Promise<Buffer | null> => {
    const seen = changeSeenBy(change, platform);
    if (seen !== undefined) return seen;
    const row = await o.store.get(change.entry.endpointId);
    return row && takesPart(row.record, platform) ? change.bytes : null;
  };

  /** One read from `last`: writes what it returned; true when more may follow at once. */
  const look = async (): Promise<boolean> => {
    if (last === undefined) {
      // A fresh start (or an ID that is no position): a reset at the newest position says so.
      const { newest } = await reader.read(Number.MAX_SAFE_INTEGER);
      if (ended) return false;
      res.write(formatReset(newest, null));
      last = newest;
      return true;
    }
    const batch = await reader.read(last);
    if (ended) return false;
    if (batch.missed) {
      res.write(formatReset(batch.newest, null));
      last = batch.newest;
      return true;
    }
    for (const change of batch.changes) {
      const bytes = o.platform === undefined ? change.bytes : await seenByBot(change, o.platform);
      if (ended) return false;
      if (bytes) res.write(bytes);
      last = change.position;
      if (res.writableNeedDrain) {
        await drained();
        if (ended) return false;
      }
    }
    return !batch.current || last < batch.newest;
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
      (o.req.log ?? o.logger).warn({ err, stream: 'all' }, 'event stream ended: the store failed');
      end();
    } finally {
      pumping = false;
    }
  };

  const wake = () => {
    dirty = true;
    void pump();
  };

  const unsubscribe = streams.feed.subscribeAll(wake);
  const untrack = streams.track(end, o.key, o.bot);
  const heartbeat = setInterval(() => {
    if (stalledSince !== undefined) {
      if (Date.now() - stalledSince >= stallMs) {
        res.destroy();
        end();
        return;
      }
    } else {
      res.write(HEARTBEAT);
    }
    o.stillAllowed().then(
      (allowed) => (allowed ? wake() : end()),
      () => wake(),
    );
  }, heartbeatMs);
  res.on('close', end);
  if (streams.closed || res.destroyed || !res.socket || res.socket.destroyed) end();
  else void pump();
}
