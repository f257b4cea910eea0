import type { EndpointRecord, Platform } from '../domain/record.ts';
import type { Decision, DeliveryDraft, MessageState } from '../domain/row.ts';

export type { Decision, DeliveryDraft, MessageState };
import type { ChangeFeed } from './changeFeed.ts';
import type { ChannelMatch } from './channelIndex.ts';
import type { LoggedMessage, MessageLog } from './messageLog.ts';

export type { ChannelMatch };

export interface StoredEndpoint {
  tokenHash: Uint8Array;
  /** Parsed on first use, and shared by every reader of a cached row: never mutate it (copy first). */
  record: EndpointRecord;
  /**
   * The record's JSON text exactly as committed: JSON.stringify of the record, in both adapters. A read
   * sends it without re-serialising, and applyUpdate compares against it to tell a no-op update.
   */
  recordJson: string;
  /** recordJson's length in UTF-8 bytes, when the adapter keeps it with the row (both do). */
  recordJsonBytes?: number;
  state: MessageState;
  /** 0 at creation, + 1 with every committed write of the row; the ID of the change's event. */
  version: number;
}

/** A bot: its key acts for `platform` on every endpoint. Only the key's SHA-256 digest is stored. */
export interface StoredBot {
  id: string;
  platform: Platform;
  keyHash: Uint8Array;
}

/** One committed change of an endpoint: its record as of `version`. */
export interface EndpointEvent {
  version: number;
  /**
   * The record's JSON text exactly as committed, in UTF-8: what a stream sends. An adapter that reads
   * it as bytes (SQLite) never makes a string of it, which keeps large records out of the JS heap.
   */
  readonly recordJsonUtf8: Uint8Array;
  /** recordJsonUtf8's length. */
  readonly recordJsonBytes: number;
  /** The same text as a string, decoded on first use. */
  readonly recordJson: string;
  /** Parsed on first use (a replay never parses). */
  readonly record: EndpointRecord;
  /** The pending message's number as of this version (`state.seq`), or null when the endpoint was idle. */
  readonly messageNumber: number | null;
}

/**
 * One entry of the service-wide change log: the `position`-th committed change of any endpoint, in
 * commit order (positions ascend in the order the writes committed, on every instance). `event` is
 * the endpoint's event of that version, or undefined when the endpoint's own log no longer keeps it
 * (it has had `maxEvents` newer changes since, or was deleted): the reader missed that change.
 */
export interface ChangeEntry {
  position: number;
  endpointId: string;
  version: number;
  event: EndpointEvent | undefined;
}

/** One read of the change log (changesSince). */
export interface ChangeRead {
  /** Entries after the position asked for, ascending. */
  entries: ChangeEntry[];
  /**
   * True when changes after the position asked for are no longer kept (past the change window), or
   * the position was never issued (above the newest): the reader missed changes and starts over
   * from `newest`.
   */
  missed: boolean;
  /** The newest committed position when read (0 before the first change). */
  newest: number;
}

/**
 * How far back the service-wide change log reaches: at least the newest `maxChanges` changes, none
 * older than `maxAgeMs`. The periodic sweep (pruneEvents) deletes what is past either; the newest
 * entry is always kept, so the newest position is never forgotten.
 */
export interface ChangeLogWindow {
  maxChanges: number;
  maxAgeMs: number;
}

export const DEFAULT_CHANGE_WINDOW: ChangeLogWindow = { maxChanges: 100_000, maxAgeMs: 10 * 60_000 };

/**
 * How much of each endpoint's event log is kept for replay: the newest `maxEvents` events, none
 * older than `maxAgeMs`. Older ones are never returned. Each write deletes the endpoint's events
 * beyond `maxEvents` (a key range, cheap); `pruneEvents`, run periodically, deletes those past
 * `maxAgeMs` (checking age on every write would read the endpoint's whole log).
 */
export interface EventLogWindow {
  maxEvents: number;
  maxAgeMs: number;
}

export const DEFAULT_EVENT_WINDOW: EventLogWindow = { maxEvents: 100, maxAgeMs: 10 * 60_000 };

/** An outbox entry claimed by a worker (leased until `leaseUntil`). */
export interface Delivery extends DeliveryDraft {
  id: number;
  endpointId: string;
  seq: number;
  /** Attempts made so far, including the current one. */
  attempts: number;
}

/** One group commit, timed on the event loop (wall time: the loop serves nothing else meanwhile). */
export interface GroupCommitTiming {
  /** Updates in the transaction. */
  updates: number;
  /** BEGIN, then every update's read, decision and statements, in milliseconds. */
  statementsMs: number;
  /** The COMMIT in milliseconds: the WAL's frames, its fsync, and any automatic checkpoint. */
  commitMs: number;
}

/**
 * The storage port. Adapters (SQLite, PostgreSQL) make `update` atomic: `decide` sees the committed
 * row, and its decision commits only if nothing else has changed the row since (SQLite holds the write
 * lock; PostgreSQL writes only if the row's version and token are unchanged, else reads and decides
 * again, taking the row lock after a few lost races).
 *
 * Every committed `write` (of `update` or `completeDelivery`) also increments the row's `version` and
 * appends the new record to the endpoint's event log, in the same transaction, and tells the change
 * feed once committed. A decision without `write` changes neither.
 */
export interface EndpointStore {
  /** The adapter's name, for logs and export headers ("sqlite", "postgres"). */
  readonly kind: string;
  /**
   * Whether get() answers from memory within the caller's event-loop turn (SQLite's row cache), rather
   * than after a round trip to a database server (PostgreSQL). The HTTP layer overlaps a read that
   * crosses the network with its other work, and batches the answers of reads that do not.
   */
  readonly readsInTurn: boolean;
  get(id: string): Promise<StoredEndpoint | undefined>;
  /**
   * Read-decide-write, atomically. `decide` must be synchronous and free of I/O, and may run more than
   * once: only the decision on the row as it is when the write commits takes effect.
   */
  update<T>(id: string, decide: (current: StoredEndpoint | undefined) => Decision<T>): Promise<T>;
  /** false when the ID is taken. */
  create(id: string, tokenHash: Uint8Array, record: EndpointRecord): Promise<boolean>;
  /** false when there is no such endpoint. */
  setTokenHash(id: string, tokenHash: Uint8Array): Promise<boolean>;
  /** false when there is no such endpoint. Its outbox entries go with it. */
  delete(id: string): Promise<boolean>;
  /** IDs in ascending order, starting after `after`. */
  listIds(after: string | undefined, limit: number): Promise<string[]>;
  /**
   * The endpoints whose `config.channels[platform]` holds `channel` (exact match), with its position
   * there, ordered by endpoint ID (byte order) then position; at most `limit`. Answered from an index
   * that every write of a record (create, update, delete, import) keeps in its own transaction, so it
   * is never behind the records, and its cost does not grow with the number of endpoints.
   */
  lookupChannel(platform: Platform, channel: string, limit: number): Promise<ChannelMatch[]>;

  /** false when the ID is taken. */
  createBot(bot: StoredBot): Promise<boolean>;
  /** false when there is no such bot. */
  setBotKeyHash(id: string, keyHash: Uint8Array): Promise<boolean>;
  /** false when there is no such bot. */
  deleteBot(id: string): Promise<boolean>;
  /** Every bot, in ascending ID order (the admin layer keeps them few, see admin/bots.ts). */
  listBots(): Promise<StoredBot[]>;

  /**
   * Leases due, unexpired, unleased outbox entries until `now + leaseMs` and counts the attempt,
   * only the oldest entry of each webhook (endpoint, platform, URL) while it is queued, expired or
   * not (the expiry pass removes an expired one, and the next becomes due): up
   * to `limits` of them, or, given per platform, up to each platform's limit (in one transaction
   * where the store commits on the caller's thread). Concurrent callers (other processes included)
   * never receive the same entry while its lease runs. `skip` names, per platform, endpoints whose
   * entries to that platform stay unclaimed (the caller has no room for them yet).
   */
  claimDeliveries(
    now: number,
    leaseMs: number,
    limits: number | Partial<Record<Platform, number>>,
    skip?: Partial<Record<Platform, readonly string[]>>,
  ): Promise<Delivery[]>;
  /**
   * The delivery succeeded: removes its entry and, in the same transaction, applies `decide` to its
   * endpoint (marks the platform read). If the entry is gone (superseded), `decide` sees that.
   */
  completeDelivery<T>(delivery: Delivery, decide: (current: StoredEndpoint | undefined, stillQueued: boolean) => Decision<T>): Promise<T>;
  /** Not delivered yet: releases the lease and schedules the next attempt. */
  retryDelivery(id: number, nextAttemptAt: number): Promise<void>;
  /** Gives up on an entry. */
  dropDelivery(id: number): Promise<void>;
  /**
   * The webhook asked for a pause (its rate limit's window is used up): none of the endpoint's entries
   * to it is attempted before `until` (epoch ms).
   */
  holdDeliveries(endpointId: string, platform: Platform, url: string, until: number): Promise<void>;
  /** Outbox entries waiting (for metrics and tests). */
  countDeliveries(): Promise<number>;
  /** Endpoints with a pending message (for metrics). */
  countPending(): Promise<number>;
  /** IDs of endpoints whose message has been pending since before `pendingBefore`. */
  listExpired(pendingBefore: number, limit: number): Promise<string[]>;

  /**
   * Up to `limit` events of the endpoint's log with a version above `afterVersion`, ascending. Only
   * the replay window is kept, so the first may come later than `afterVersion + 1`: the versions in
   * between are gone. Versions of one endpoint are consecutive, so the events returned are too.
   *
   * With `maxBytes`, the events returned hold at most that many bytes of record JSON together, but
   * the first is returned whatever its size: a reader holds at most one read's worth of records
   * (`max(maxBytes, one record)`), and a record larger than `maxBytes` still gets through. The
   * adapters size the events before reading them, so a read never loads the records it leaves out.
   */
  eventsSince(id: string, afterVersion: number, limit: number, maxBytes?: number): Promise<EndpointEvent[]>;
  /**
   * Up to `limit` entries of the service-wide change log after `afterPosition`, ascending, with their
   * events; with `maxBytes`, as eventsSince (the first entry whatever its size, then only while the
   * records together fit). Entries past the change window are never returned.
   */
  changesSince(afterPosition: number, limit: number, maxBytes?: number): Promise<ChangeRead>;
  /**
   * Deletes events older than the window's age from every endpoint's log, and change-log entries past
   * the change window; returns how many rows.
   */
  pruneEvents(): Promise<number>;
  /**
   * Notifications of committed writes, token rotations and deletions, from every process this store
   * is shared with (PostgreSQL) or this process (SQLite). `onError` hears of connection trouble the
   * feed recovers from by itself.
   */
  openChangeFeed(hooks?: { onError?: (err: Error) => void }): Promise<ChangeFeed>;

  /**
   * Stores that group the updates of one event-loop turn into one transaction (SQLite) tell
   * `listener` of each group commit that committed, for metrics and benchmarks. A store without
   * group commits on the event loop leaves this out.
   */
  observeGroupCommits?(listener: (commit: GroupCommitTiming) => void): void;

  /** The message log aggregate: its writes ride on this store's transactions (Decision.write.messages). */
  readonly messages: MessageLog;

  /** Rejects when the store cannot serve requests. */
  ping(): Promise<void>;
  close(): Promise<void>;

  /**
   * Every endpoint with its pending deliveries, in ascending ID order, read a page of
   * SNAPSHOT_PAGE_ROWS endpoints at a time (memory stays bounded whatever the store's size). Each
   * page is one statement, so an endpoint and its deliveries are consistent with each other; pages
   * read while another process writes may come from different moments (stop the server to move a store).
   */
  exportRows(): AsyncIterable<EndpointSnapshot>;
  /**
   * Adds the endpoints of `rows` (IDs unique among them) in one transaction: all of them, or, if any
   * ID already exists with other content (see ImportOutcome), none. An ID that exists with the same
   * token digest, record, message state and version is left as it is (counted unchanged), so importing
   * the same rows again changes nothing. Imported rows start with an empty event log.
   *
   * `bots` (IDs and key digests unique among them) are added in the same transaction, by the same rule
   * (store/botImport.ts): a bot that exists with another platform or key digest, or whose digest
   * another bot holds, is a conflict, and then nothing at all is written.
   */
  importRows(rows: AsyncIterable<EndpointSnapshot> | Iterable<EndpointSnapshot>, bots?: readonly StoredBot[]): Promise<ImportOutcome>;
}

/** Endpoints per page of exportRows (and per staged batch of importRows). */
export const SNAPSHOT_PAGE_ROWS = 100;

/** An outbox entry of an endpoint's pending message, as exported (a lease is not kept). */
export interface SnapshotDelivery {
  /** The message it delivers. */
  messageSeq: number;
  platform: Platform;
  url: string;
  payload: string;
  attempts: number;
  nextAttemptAt: number;
  expiresAt: number;
}

/** Everything a store keeps of one endpoint that a move to another store must carry. */
export interface EndpointSnapshot {
  id: string;
  tokenHash: Uint8Array;
  /** The record's JSON text, exactly as committed. */
  recordJson: string;
  state: MessageState;
  version: number;
  /** Deliveries not yet made, oldest first; empty while idle. */
  deliveries: SnapshotDelivery[];
  /** The endpoint's message log, by number (`state.queue` summarises its unread part). */
  messages: LoggedMessage[];
}

export interface ImportOutcome {
  /** Endpoints added (0 when there are conflicts: nothing was written). */
  imported: number;
  /** Endpoints that already existed with identical content. */
  unchanged: number;
  /** IDs that exist with another token digest, record, message state or version, ascending. */
  conflicts: string[];
  /** When bots were given: how many were added (0 when anything conflicts), left as they were, and the conflicting IDs. */
  bots?: { imported: number; unchanged: number; conflicts: string[] };
}

/**
 * Whether a reader at `after` missed changes (ChangeRead.missed): the position was never issued, or
 * the entries right after it are no longer kept. `firstKept` (the oldest entry within the window) is
 * asked only when the entries read do not start right after `after`. On PostgreSQL a position can be
 * skipped (a transaction that failed after taking it), so a hole right after `after` while everything
 * before it was pruned may be reported as missed: the reader then starts over, losing nothing.
 */
export function missedChanges(
  after: number,
  entries: readonly ChangeEntry[],
  newest: number,
  firstKept: () => number | undefined,
): boolean {
  if (after > newest) return true;
  if (after === newest || entries[0]?.position === after + 1) return false;
  const first = firstKept();
  return first === undefined || first > after + 1;
}
