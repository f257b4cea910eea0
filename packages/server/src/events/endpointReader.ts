// The events the per-endpoint streams (session.ts) send, shared by the streams of this instance: each
// event is formatted into its bytes once, and every stream that sends it writes those same bytes.
//
// A stream caught up at version v - 1 that reads the endpoint's row at version v sends the row as
// event v: a write commits the row and its event in one transaction, with the same record and message
// number, so the row is the event and the log is not read at all (both streams of an endpoint, every
// live event). A stream further behind reads the log; streams asking for the same read while it is
// under way share it. Events formatted are kept for the streams a little behind: a run of consecutive
// versions per endpoint, SHARED_EVENT_BYTES in all (the endpoints kept longest ago go first), and
// an endpoint's are dropped when its last stream on this instance ends.
import type { EndpointStore, StoredEndpoint } from '../store/port.ts';
import { messageNumberOf } from '../store/rows.ts';
import { formatEvent } from './eventFormat.ts';
import type { TurnQueue } from './turns.ts';

/** One event of an endpoint, as its stream sends it (`record`). */
export interface FormattedEvent {
  version: number;
  bytes: Buffer;
}

/** Bytes of formatted events kept for the streams of all endpoints together. */
export const SHARED_EVENT_BYTES = 8 * 1024 * 1024;

/**
 * An event larger than this is sent, not kept: a replay of the largest records keeps the streams'
 * memory to what they send, and the live events worth sharing are small.
 */
export const LARGEST_KEPT = 64 * 1024;

interface Kept {
  /**
   * The token digest of the row the events were kept for: an endpoint deleted and created again has
   * versions of the same numbers, and another token. A rotation only makes the next stream format again.
   */
  tokenHash: Uint8Array;
  /** Consecutive versions, ascending. */
  events: FormattedEvent[];
  bytes: number;
}

export class EndpointReader {
  private readonly store: EndpointStore;
  private readonly turns: TurnQueue;
  private readonly limits: { batchSize: number; replayBatchBytes: number };
  /** By endpoint, in the order last kept (a Map iterates in insertion order). */
  private readonly kept = new Map<string, Kept>();
  private keptBytes = 0;
  private readonly reading = new Map<string, Promise<FormattedEvent[]>>();
  /** Reads of the log so far (for tests). */
  reads = 0;
  /** Events formatted so far (for tests). */
  formatted = 0;

  constructor(store: EndpointStore, turns: TurnQueue, limits: { batchSize: number; replayBatchBytes: number }) {
    this.store = store;
    this.turns = turns;
    this.limits = limits;
  }

  /** Bytes of the events kept now. */
  get heldBytes(): number {
    return this.keptBytes;
  }

  /** Event `row.version`, as the row has it: formatted once for every stream that sends it. */
  current(endpointId: string, row: StoredEndpoint): FormattedEvent {
    const found = this.fromKept(endpointId, row.tokenHash, row.version - 1, 1);
    if (found.length === 1) return found[0]!;
    this.formatted++;
    const event = { version: row.version, bytes: formatEvent(row.version, 'record', row.recordJson, messageNumberOf(row.state)) };
    this.keep(endpointId, row.tokenHash, [event]);
    return event;
  }

  /**
   * The events after `after` of the endpoint whose row has `tokenHash`: those kept, while they follow
   * on; else one bounded read of the log (at most `batchSize` events and `replayBatchBytes` of records,
   * one larger record alone), shared with the streams that ask for the same while it runs. As
   * eventsSince, the first may come later than `after + 1` (the log no longer keeps those between).
   */
  read(endpointId: string, tokenHash: Uint8Array, after: number): Promise<FormattedEvent[]> {
    const found = this.fromKept(endpointId, tokenHash, after, this.limits.batchSize);
    if (found.length > 0) return Promise.resolve(found);
    const key = `${after}:${Buffer.from(tokenHash).toString('base64')}:${endpointId}`;
    let pending = this.reading.get(key);
    if (!pending) {
      pending = this.fromStore(endpointId, tokenHash, after).finally(() => this.reading.delete(key));
      this.reading.set(key, pending);
    }
    return pending;
  }

  /** The endpoint has no stream left here: what was kept for it goes. */
  forget(endpointId: string): void {
    const kept = this.kept.get(endpointId);
    if (!kept) return;
    this.kept.delete(endpointId);
    this.keptBytes -= kept.bytes;
  }

  private async fromStore(endpointId: string, tokenHash: Uint8Array, after: number): Promise<FormattedEvent[]> {
    const { batchSize, replayBatchBytes } = this.limits;
    const read = await this.turns.run(() => {
      this.reads++;
      return this.store.eventsSince(endpointId, after, batchSize, replayBatchBytes);
    });
    const events = read.map((e) => {
      this.formatted++;
      return { version: e.version, bytes: formatEvent(e.version, 'record', e.recordJsonUtf8, e.messageNumber) };
    });
    this.keep(endpointId, tokenHash, events);
    return events;
  }

  /** Kept events after `after`, while they follow on: at most `limit`, and `replayBatchBytes` (the first whatever its size). */
  private fromKept(endpointId: string, tokenHash: Uint8Array, after: number, limit: number): FormattedEvent[] {
    const kept = this.kept.get(endpointId);
    if (!kept || !sameDigest(kept.tokenHash, tokenHash)) return [];
    const from = after + 1 - kept.events[0]!.version;
    if (from < 0 || from >= kept.events.length) return [];
    const found: FormattedEvent[] = [];
    let bytes = 0;
    for (let i = from; i < kept.events.length && found.length < limit; i++) {
      const event = kept.events[i]!;
      if (found.length > 0 && bytes + event.bytes.length > this.limits.replayBatchBytes) break;
      found.push(event);
      bytes += event.bytes.length;
    }
    return found;
  }

  /** Adds consecutive `events` to what is kept for the endpoint, within the bounds. */
  private keep(endpointId: string, tokenHash: Uint8Array, events: readonly FormattedEvent[]): void {
    let kept = this.kept.get(endpointId);
    if (kept && !sameDigest(kept.tokenHash, tokenHash)) {
      this.forget(endpointId);
      kept = undefined;
    }
    for (const event of events) {
      if (event.bytes.length > LARGEST_KEPT) {
        this.forget(endpointId); // what is kept must run on without a gap
        kept = undefined;
        continue;
      }
      const newest = kept?.events.at(-1)?.version;
      if (kept && newest !== undefined && event.version <= newest) continue; // kept already
      if (!kept || newest === undefined || event.version !== newest + 1) {
        this.forget(endpointId);
        kept = { tokenHash, events: [], bytes: 0 };
        this.kept.set(endpointId, kept);
      }
      kept.events.push(event);
      kept.bytes += event.bytes.length;
      this.keptBytes += event.bytes.length;
      // One read's worth per endpoint at most: older versions go first.
      while (kept.events.length > this.limits.batchSize) this.dropOldest(kept);
    }
    if (!kept || kept.events.length === 0) return;
    // Kept last now: to the end of the order.
    this.kept.delete(endpointId);
    this.kept.set(endpointId, kept);
    for (const [other, entry] of this.kept) {
      if (this.keptBytes <= SHARED_EVENT_BYTES) break;
      if (other === endpointId) {
        while (this.keptBytes > SHARED_EVENT_BYTES && entry.events.length > 1) this.dropOldest(entry);
        break;
      }
      this.forget(other);
    }
  }

  private dropOldest(kept: Kept): void {
    const dropped = kept.events.shift()!;
    kept.bytes -= dropped.bytes.length;
    this.keptBytes -= dropped.bytes.length;
  }
}

function sameDigest(a: Uint8Array, b: Uint8Array): boolean {
  return a === b || Buffer.compare(a, b) === 0;
}
