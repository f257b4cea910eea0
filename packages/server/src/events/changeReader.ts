// The reads of the service-wide change log for the streams of all changes (GET /events), shared by
// every such stream of this instance. Streams at the same position (every stream that has caught up
// is at the newest one) ask for the same read: it runs once, and each change is formatted into its
// event's bytes once, whatever the number of streams; every stream writes those same bytes. A stream
// behind the others (replaying) reads on its own until it catches up. What is kept is bounded: the
// last RECENT_READS reads (each at most `batchSize` events and `replayBatchBytes` of records, one
// larger record alone), so a stream a little behind is served from memory too.
//
// A read is as new as the change notices heard before it began, no newer. The changes it returned
// stay true (positions once read are final), but its `newest` is out of date as soon as another
// notice arrives: a stream that asks after that notice (woken by it, or opened after it) gets the
// kept changes with `current: false` and reads again from where they end, and never joins a read
// that began before the notice.
import type { ChangeFeed } from '../store/changeFeed.ts';
import type { ChangeEntry, EndpointStore } from '../store/port.ts';
import type { TurnQueue } from './turns.ts';

/** One change as its stream event: `change` (the record as of the change) or `reset` (no longer kept). */
export interface FormattedChange {
  position: number;
  bytes: Buffer;
  /** What it was formatted from, for the views of bot keys (botChanges.ts). */
  entry: ChangeEntry;
}

export interface ChangeBatch {
  /** The changes after the position asked for, as events, ascending. */
  changes: readonly FormattedChange[];
  /** Changes after the position asked for are no longer kept (or it was never issued): start over at `newest`. */
  missed: boolean;
  /** The newest committed position when read: a stream whose last event is older reads again. */
  newest: number;
  /**
   * False when changes were notified after the read began (a kept read): `newest` may be out of date,
   * so the stream reads again after these changes.
   */
  current: boolean;
}

/** Reads kept for the streams that follow a little behind. */
export const RECENT_READS = 4;

const EVENT_END = Buffer.from('}\n\n');

/**
 * `change`: `{"endpoint", "version", "messageNumber", "record"}`; the record's JSON goes in as
 * committed, never re-serialised. JSON.stringify escapes line breaks, so the data fits one line.
 */
export function formatChange(entry: ChangeEntry): FormattedChange {
  const { position, endpointId, event } = entry;
  if (!event) return { position, bytes: formatReset(position, endpointId), entry };
  if (event.kind !== 'record') return { position, bytes: formatMessageChange(entry, event.kind, event.recordJson), entry };
  return { position, bytes: formatChangeOf(entry, event.json), entry };
}

/**
 * The `edit` or `delete` event of a logged message: its data (`{"number", "ids", ...}`) with the
 * endpoint and version first.
 */
export function formatMessageChange(entry: ChangeEntry, kind: 'edit' | 'delete', data: string): Buffer {
  const { position, endpointId, version } = entry;
  return Buffer.from(
    `id: ${position}\nevent: ${kind}\ndata: {"endpoint":${JSON.stringify(endpointId)},"version":${version},${data.slice(1)}\n\n`,
  );
}

/** The `change` event of `entry` with `record` (its record's JSON, as committed or as a bot key sees it). */
export function formatChangeOf(entry: ChangeEntry, record: Uint8Array | string): Buffer {
  const { position, endpointId, version, event } = entry;
  const head = `id: ${position}\nevent: change\ndata: {"endpoint":${JSON.stringify(endpointId)},"version":${version},"messageNumber":${event?.messageNumber ?? null},"record":`;
  return Buffer.concat([Buffer.from(head), typeof record === 'string' ? Buffer.from(record) : record, EVENT_END]);
}

/**
 * `reset`: changes were missed, of `endpoint` (its log no longer keeps that change: re-read the
 * endpoint) or of any endpoint (null: the stream starts over at `position`; re-read what you need).
 */
export function formatReset(position: number, endpointId: string | null): Buffer {
  return Buffer.from(`id: ${position}\nevent: reset\ndata: {"endpoint":${JSON.stringify(endpointId)}}\n\n`);
}

interface Kept {
  after: number;
  changes: FormattedChange[];
  newest: number;
  /** The notices heard when the read began. */
  notices: number;
}

interface Reading {
  batch: Promise<ChangeBatch>;
  /** The notices heard when the store read began; unset while it waits for its turn. */
  began: { notices?: number };
}

export class ChangeReader {
  private readonly store: EndpointStore;
  private readonly turns: TurnQueue;
  private readonly limits: { batchSize: number; replayBatchBytes: number };
  private readonly recent: Kept[] = [];
  private readonly reading = new Map<number, Reading>();
  /** Change notices heard so far (of any endpoint, or "look again"). */
  private notices = 0;
  /** Reads of the store so far (for tests: streams at one position share one). */
  reads = 0;

  /**
   * Made before any stream of all changes subscribes to `feed`, so each notice is counted here before
   * the streams it wakes ask for a read.
   */
  constructor(store: EndpointStore, feed: ChangeFeed, turns: TurnQueue, limits: { batchSize: number; replayBatchBytes: number }) {
    this.store = store;
    this.turns = turns;
    this.limits = limits;
    feed.subscribeAll(() => this.notices++);
  }

  /** The changes after `after`: from a recent read that covers it, from a read under way, or a new read. */
  read(after: number): Promise<ChangeBatch> {
    for (const kept of this.recent) {
      if (kept.after === after) return this.fromKept(kept, kept.changes);
      const at = kept.changes.findIndex((c) => c.position === after);
      if (at !== -1 && at < kept.changes.length - 1) return this.fromKept(kept, kept.changes.slice(at + 1));
    }
    const pending = this.reading.get(after);
    const notices = pending?.began.notices;
    if (pending && (notices === undefined || notices === this.notices)) return pending.batch;
    const began: Reading['began'] = {};
    const batch = this.fromStore(after, began).finally(() => {
      if (this.reading.get(after)?.batch === batch) this.reading.delete(after);
    });
    this.reading.set(after, { batch, began });
    return batch;
  }

  private fromKept(kept: Kept, changes: readonly FormattedChange[]): Promise<ChangeBatch> {
    return Promise.resolve({ changes, missed: false, newest: kept.newest, current: kept.notices === this.notices });
  }

  private async fromStore(after: number, began: Reading['began']): Promise<ChangeBatch> {
    const { batchSize, replayBatchBytes } = this.limits;
    const read = await this.turns.run(() => {
      began.notices = this.notices;
      this.reads++;
      return this.store.changes.changesSince(after, batchSize, replayBatchBytes);
    });
    const changes = read.entries.map(formatChange);
    // Positions once read are final (see the store's change log), so a read can serve later readers;
    // an empty one cannot (changes may commit after it).
    if (!read.missed && changes.length > 0) {
      this.recent.push({ after, changes, newest: read.newest, notices: began.notices! });
      if (this.recent.length > RECENT_READS) this.recent.shift();
    }
    // Everyone who shares this read asked before it began: it is as new as they need.
    return { changes, missed: read.missed, newest: read.newest, current: true };
  }
}
