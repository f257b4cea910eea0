// The reads of the service-wide change log for the streams of all changes (GET /events), shared by
// every such stream of this instance. Streams at the same position (every stream that has caught up
// is at the newest one) ask for the same read: it runs once, and each change is formatted into its
// event's bytes once, whatever the number of streams; every stream writes those same bytes. A stream
// behind the others (replaying) reads on its own until it catches up. What is kept is bounded: the
// last RECENT_READS reads (each at most `batchSize` events and `replayBatchBytes` of records, one
// larger record alone), so a stream a little behind is served from memory too.
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
  return { position, bytes: formatChangeOf(entry, event.recordJsonUtf8), entry };
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
}

export class ChangeReader {
  private readonly store: EndpointStore;
  private readonly turns: TurnQueue;
  private readonly limits: { batchSize: number; replayBatchBytes: number };
  private readonly recent: Kept[] = [];
  private readonly reading = new Map<number, Promise<ChangeBatch>>();
  /** Reads of the store so far (for tests: streams at one position share one). */
  reads = 0;
  /**
   * Whether a change was committed since the last read of the store began. A kept read says how far
   * the log reached when it was made; once a change has committed since, a stream that reaches the
   * end of a kept read must ask the store again, or (with nothing else waking it) it would wait at
   * that position for the next change of any endpoint.
   */
  private changedSinceRead = true;
  private newestRead = 0;

  /** A change was committed (the change feed said so): kept reads no longer tell where the log ends. */
  noteChange(): void {
    this.changedSinceRead = true;
  }

  constructor(store: EndpointStore, turns: TurnQueue, limits: { batchSize: number; replayBatchBytes: number }) {
    this.store = store;
    this.turns = turns;
    this.limits = limits;
  }

  /** The changes after `after`: from a recent read that covers it, from a read under way, or a new read. */
  read(after: number): Promise<ChangeBatch> {
    // Past a kept read's end lies at least what the newest read saw, and, after a change, an unknown more.
    const newest = (kept: Kept) => (this.changedSinceRead ? Number.MAX_SAFE_INTEGER : Math.max(kept.newest, this.newestRead));
    for (const kept of this.recent) {
      if (kept.after === after) return Promise.resolve({ changes: kept.changes, missed: false, newest: newest(kept) });
      const at = kept.changes.findIndex((c) => c.position === after);
      if (at !== -1 && at < kept.changes.length - 1) {
        return Promise.resolve({ changes: kept.changes.slice(at + 1), missed: false, newest: newest(kept) });
      }
    }
    let pending = this.reading.get(after);
    if (!pending) {
      pending = this.fromStore(after).finally(() => this.reading.delete(after));
      this.reading.set(after, pending);
    }
    return pending;
  }

  private async fromStore(after: number): Promise<ChangeBatch> {
    const { batchSize, replayBatchBytes } = this.limits;
    const read = await this.turns.run(() => {
      this.reads++;
      this.changedSinceRead = false; // this read sees every change committed before it
      return this.store.changesSince(after, batchSize, replayBatchBytes);
    });
    this.newestRead = Math.max(this.newestRead, read.newest);
    const changes = read.entries.map(formatChange);
    // Positions once read are final (see the store's change log), so a read can serve later readers;
    // an empty one cannot (changes may commit after it).
    if (!read.missed && changes.length > 0) {
      this.recent.push({ after, changes, newest: read.newest });
      if (this.recent.length > RECENT_READS) this.recent.shift();
    }
    return { changes, missed: read.missed, newest: read.newest };
  }
}
