// The embedded store: one SQLite file through node:sqlite (no native build). WAL mode with
// synchronous=FULL, so a write is on disk before it is acknowledged. node:sqlite is synchronous, so a
// transaction never interleaves with another request in this process (updates are grouped into one
// transaction per event-loop turn, see groupCommit); BEGIN IMMEDIATE serialises
// writers across processes (the CLI may run beside the server).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { RowCache } from './rowCache.ts';
import { type EndpointRow, LoggedEvent, type OutboxRow, StoredRow, claimLanes, messageNumberOf, toDelivery, toStored } from './rows.ts';
import type { EndpointRecord, Platform } from '../domain/record.ts';
import { ChangeHub, type ChangeFeed } from './changeFeed.ts';
import {
  DEFAULT_CHANGE_WINDOW,
  DEFAULT_EVENT_WINDOW,
  type ChangeEntry,
  type ChangeLogWindow,
  type ChangeRead,
  type Decision,
  type Delivery,
  type EndpointEvent,
  type EndpointStore,
  type EventLogWindow,
  type GroupCommitTiming,
  type StoredBot,
  type StoredEndpoint,
  type EndpointSnapshot,
  type ImportOutcome,
  missedChanges,
  SNAPSHOT_PAGE_ROWS,
} from './port.ts';
import { type SnapshotRow, batchesOf, toSnapshot } from './snapshotRows.ts';
import { planBotImport } from './botImport.ts';
import { type ChannelEntry, type ChannelMatch, changedChannelEntries, channelEntries } from './channelIndex.ts';
import { queueJson } from '../domain/messageQueue.ts';
import { MESSAGE_LOG_MIGRATION, SqliteMessageLog } from './sqlite/messageLog.ts';
import { WEBHOOK_HEADS_MIGRATION } from './sqlite/webhookHeads.ts';

/** Indexes the channels of every record of `table` (endpoints, or an import's staging table). */
function indexRecordsOf(table: string, where = 'TRUE'): string {
  return `INSERT INTO channel_index (platform, channel, endpoint_id, bridge)
            SELECT p.key, c.value, e.id, c.key FROM ${table} e, json_each(e.record, '$.config.channels') p, json_each(p.value) c
            WHERE ${where} AND p.type = 'array' AND c.type = 'text' ON CONFLICT DO NOTHING;`;
}

// Ordered and append-only: an existing file runs the ones it has not seen (PRAGMA user_version).
export const MIGRATIONS = [
  `CREATE TABLE endpoints (
     id TEXT PRIMARY KEY,
     token_hash BLOB NOT NULL,
     record TEXT NOT NULL,
     message_seq INTEGER NOT NULL DEFAULT 0,
     pending_since INTEGER,
     created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
     updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
   ) STRICT;
   CREATE INDEX endpoints_pending ON endpoints (pending_since) WHERE pending_since IS NOT NULL;
   CREATE TABLE outbox (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     endpoint_id TEXT NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
     message_seq INTEGER NOT NULL,
     platform TEXT NOT NULL,
     url TEXT NOT NULL,
     payload TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at INTEGER NOT NULL,
     lease_until INTEGER NOT NULL DEFAULT 0,
     expires_at INTEGER NOT NULL,
     UNIQUE (endpoint_id, message_seq, platform)
   ) STRICT;
   CREATE INDEX outbox_due ON outbox (next_attempt_at);`,
  // The change stream: a version per endpoint and a bounded log of its committed records.
  `ALTER TABLE endpoints ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE endpoint_events (
     endpoint_id TEXT NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
     version INTEGER NOT NULL,
     record TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     PRIMARY KEY (endpoint_id, version)
   ) STRICT;
   CREATE INDEX endpoint_events_created ON endpoint_events (created_at);`,
  // The event log becomes append-only: one table in commit order with no index but its key, and each
  // endpoint's row lists the IDs of its logged events (oldest first). An update then writes one
  // appended row instead of entries in three b-trees (the events were keyed by endpoint, which put
  // every update's entry on a different page); the event pages of a group commit are shared.
  // AUTOINCREMENT: an ID is never reused, so a listed ID whose row the age sweep deleted matches
  // nothing instead of another event. Existing events move over in commit order, but for those past
  // the default age limit (10 minutes), which no replay returns.
  `CREATE TABLE event_log (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     endpoint_id TEXT NOT NULL,
     version INTEGER NOT NULL,
     record TEXT NOT NULL,
     created_at INTEGER NOT NULL
   ) STRICT;
   ALTER TABLE endpoints ADD COLUMN event_ids TEXT NOT NULL DEFAULT '[]';
   INSERT INTO event_log (endpoint_id, version, record, created_at)
     SELECT endpoint_id, version, record, created_at FROM endpoint_events
     WHERE created_at >= CAST(unixepoch('subsec') * 1000 AS INTEGER) - 600000
     ORDER BY created_at, endpoint_id, version;
   CREATE INDEX migrating_event_log ON event_log (endpoint_id, version);
   UPDATE endpoints SET event_ids = (SELECT json_group_array(id ORDER BY version) FROM event_log WHERE endpoint_id = endpoints.id)
     WHERE id IN (SELECT endpoint_id FROM event_log);
   DROP INDEX migrating_event_log;
   DROP TABLE endpoint_events;`,
  // Bot keys: each acts for one platform on every endpoint; only the key's SHA-256 digest is kept.
  `CREATE TABLE bots (
     id TEXT PRIMARY KEY,
     platform TEXT NOT NULL,
     key_hash BLOB NOT NULL UNIQUE,
     created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
   ) STRICT;`,
  // The lookup index: (platform, channel) -> (endpoint, bridge), written in the transaction of every
  // write of a record; the endpoints already stored are indexed here.
  `CREATE TABLE channel_index (
     platform TEXT NOT NULL,
     channel TEXT NOT NULL,
     endpoint_id TEXT NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
     bridge INTEGER NOT NULL,
     PRIMARY KEY (platform, channel, endpoint_id, bridge)
   ) STRICT, WITHOUT ROWID;
   CREATE INDEX channel_index_endpoint ON channel_index (endpoint_id);
   ${indexRecordsOf('endpoints')}`,
  // Each event carries the pending message's number as of its version, and the service-wide change
  // log lists every event in commit order. A change's position is its event's ID: SQLite commits one
  // writer at a time (BEGIN IMMEDIATE, across processes too) and AUTOINCREMENT assigns IDs in that
  // order, rolled back with the transaction, so positions are consecutive and in commit order. The
  // change log is its own table because an endpoint's events beyond its window are deleted with each
  // write: the entry stays, so a reader learns it missed that endpoint's change. Positions start here
  // (no backfill).
  `ALTER TABLE event_log ADD COLUMN message_number INTEGER;
   CREATE TABLE change_log (
     position INTEGER PRIMARY KEY,
     endpoint_id TEXT NOT NULL,
     version INTEGER NOT NULL,
     created_at INTEGER NOT NULL
   ) STRICT;`,
  // Every accepted message is kept until each platform has it (store/sqlite/messageLog.ts).
  MESSAGE_LOG_MIGRATION,
  // A webhook's next delivery is found without walking its backlog (store/sqlite/webhookHeads.ts).
  WEBHOOK_HEADS_MIGRATION,
];

export interface SqliteStoreOptions {
  /** Epoch milliseconds, for the event log's timestamps and age limit (default Date.now). */
  clock?: () => number;
  /** Replay window of the event log (default: the last 100 events, none older than 10 minutes). */
  eventWindow?: Partial<EventLogWindow>;
  /** Window of the service-wide change log (default: the newest 100,000 changes, none older than 10 minutes). */
  changeWindow?: Partial<ChangeLogWindow>;
  /** Committed rows kept in memory for reads (default 10,000; 0 turns the cache off). */
  cachedRows?: number;
  /**
   * How long one statement waits for another process's write lock, holding this thread (default
   * 5000 ms, for the CLI). The server sets it short: the wait blocks its event loop, liveness
   * included. Its group commits wait for the lock on timers instead, up to `lockWaitMs`.
   */
  busyTimeoutMs?: number;
  /** How long a group commit keeps retrying a write lock held by another process (default 5000 ms). */
  lockWaitMs?: number;
  /** While a change feed is open, how often commits of other processes are looked for (default 250 ms). */
  othersCheckMs?: number;
}

const DEFAULT_CACHED_ROWS = 10_000;

/** The event-log sweep deletes at most this many rows per statement (a few milliseconds). */
const PRUNE_BATCH = 1_000;

/** What a transaction's write step returns: the caller's result and, if it wrote, the new row. */
interface Written<T> {
  result: T;
  row?: StoredEndpoint;
}

/**
 * An endpoint's logged event IDs, oldest first, as the JSON array text its row stores, and how many.
 * An update appends to the text and drops from its front: no array to copy, parse or serialise.
 */
interface EventList {
  text: string;
  count: number;
}

/**
 * A row as this process has just committed it, with the list of its logged events' IDs: the
 * endpoint's next update extends that list instead of reading it back from the row (a statement per
 * update). Its record is not kept parsed: rows kept a while go to V8's old generation, and collecting
 * them there costs more than the parse would save.
 */
class CommittedRow extends StoredRow {
  readonly events: EventList;

  constructor(row: EndpointRow, events: EventList) {
    super(row);
    this.events = events;
  }
}

/** What one update of a group commit came to: its write step's result, or what it threw. */
type Outcome = { ok: true; value: Written<unknown> } | { ok: false; error: unknown };

interface QueuedUpdate {
  /** When it was queued (performance.now()): a batch waiting for the write lock gives up lockWaitMs after. */
  since: number;
  id: string;
  run: () => Written<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type TransactionStatement = 'begin' | 'commit' | 'savepoint' | 'release' | 'rollbackTo';

type StatementName =
  | 'get'
  | 'write'
  | 'create'
  | 'setToken'
  | 'delete'
  | 'list'
  | 'dropStale'
  | 'enqueue'
  | 'claim'
  | 'hold'
  | 'dequeue'
  | 'retry'
  | 'count'
  | 'countPending'
  | 'expired'
  | 'eventIds'
  | 'logEvent'
  | 'dropEvent'
  | 'dropEndpointEvents'
  | 'eventSizes'
  | 'eventRecord'
  | 'pruneEvents'
  | 'unindex'
  | 'index'
  | 'lookup'
  | 'dropDeliveryTo'
  | 'logChange'
  | 'changeSizes'
  | 'newestChange'
  | 'firstChange'
  | 'pruneChanges';

/** SQLITE_BUSY: another connection holds the lock this statement needs (past busy_timeout). */
function isLockedByOther(error: unknown): boolean {
  const e = error as { errcode?: unknown; message?: unknown } | null;
  return typeof e?.errcode === 'number' ? (e.errcode & 0xff) === 5 : typeof e?.message === 'string' && /database is locked/.test(e.message);
}

export class SqliteEndpointStore implements EndpointStore {
  readonly kind = 'sqlite';
  readonly readsInTurn = true;
  private readonly db: DatabaseSync;
  private readonly stmts: Record<StatementName, StatementSync>;
  /** Transaction control as prepared statements: exec() would compile them on every update. */
  private readonly tx: Record<TransactionStatement, StatementSync>;
  private readonly clock: () => number;
  private readonly window: EventLogWindow;
  private readonly changeWindow: ChangeLogWindow;
  private readonly hub = new ChangeHub();
  /** The message log: written inside this store's transactions, read through its own port. */
  readonly messages: SqliteMessageLog;
  /** Updates waiting for the next group commit. */
  private readonly queued: QueuedUpdate[] = [];
  private readonly cache: RowCache;
  private readonly groupCommitListeners: ((commit: GroupCommitTiming) => void)[] = [];
  private readonly lockWaitMs: number;
  private readonly othersCheckMs: number;
  /** A retry of the queued batch is scheduled: another process held the write lock. */
  private lockRetry: { timer: NodeJS.Timeout; delayMs: number } | undefined;
  /** While a change feed is open: watches for commits of other processes (see openChangeFeed). */
  private othersWatch: NodeJS.Timeout | undefined;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.window = { ...DEFAULT_EVENT_WINDOW, ...options.eventWindow };
    this.changeWindow = { ...DEFAULT_CHANGE_WINDOW, ...options.changeWindow };
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new DatabaseSync(path);
    this.lockWaitMs = options.lockWaitMs ?? 5000;
    this.othersCheckMs = options.othersCheckMs ?? 250;
    const busyTimeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000));
    this.db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = ${busyTimeoutMs}; PRAGMA foreign_keys = ON;`);
    const q = (sql: string) => this.db.prepare(sql);
    this.tx = {
      begin: q('BEGIN IMMEDIATE'),
      commit: q('COMMIT'),
      savepoint: q('SAVEPOINT item'),
      release: q('RELEASE item'),
      rollbackTo: q('ROLLBACK TO item'),
    };
    this.cache = new RowCache(q('PRAGMA data_version'), options.cachedRows ?? DEFAULT_CACHED_ROWS);
    this.migrate();
    this.messages = new SqliteMessageLog(this.db, this.clock);
    this.stmts = {
      get: q('SELECT token_hash, record, message_seq, pending_since, version, queue FROM endpoints WHERE id = ?'),
      // Compare-and-set on the version read in the same transaction. No RETURNING: the new version is
      // known (RETURNING's result set: 2-3 us per update with the statements alone, within the noise
      // of a whole request).
      write: q(
        `UPDATE endpoints SET record = ?1, message_seq = ?2, pending_since = ?3, event_ids = ?4, version = ?6 + 1, queue = ?7,
           updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?5 AND version = ?6`,
      ),
      create: q('INSERT INTO endpoints (id, token_hash, record) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING'),
      setToken: q('UPDATE endpoints SET token_hash = ? WHERE id = ? RETURNING version'),
      delete: q('DELETE FROM endpoints WHERE id = ? RETURNING version'),
      list: q('SELECT id FROM endpoints WHERE id > ? ORDER BY id LIMIT ?'),
      // Every entry of an endpoint that has nothing unread.
      dropStale: q('DELETE FROM outbox WHERE endpoint_id = ?'),
      enqueue: q(
        `INSERT INTO outbox (endpoint_id, message_seq, platform, url, payload, next_attempt_at, expires_at)
         VALUES (?, ?, ?, ?, ?, 0, ?) ON CONFLICT DO NOTHING`,
      ),
      // Only the oldest entry of each webhook (its head) is due: a webhook's messages go out one at a
      // time, in order, and one held back (a retry, a rate limit) holds the ones after it. An expired
      // head is removed by the relay's expiry pass, which runs before each claim.
      claim: q(
        `UPDATE outbox SET lease_until = ?1, attempts = attempts + 1
         WHERE id IN (SELECT o.id FROM outbox o WHERE o.head = 1 AND o.next_attempt_at <= ?2 AND o.lease_until <= ?2
                                              AND o.expires_at > ?2
                                              AND (?3 IS NULL OR o.platform = ?3)
                                              AND o.endpoint_id NOT IN (SELECT value FROM json_each(?4))
                      ORDER BY o.next_attempt_at, o.id LIMIT ?5)
         RETURNING id, endpoint_id, message_seq, platform, url, payload, attempts, expires_at`,
      ),
      hold: q('UPDATE outbox SET next_attempt_at = max(next_attempt_at, ?4) WHERE endpoint_id = ?1 AND platform = ?2 AND url = ?3'),
      dequeue: q('DELETE FROM outbox WHERE id = ?'),
      retry: q('UPDATE outbox SET next_attempt_at = ?, lease_until = 0 WHERE id = ?'),
      count: q('SELECT count(*) AS n FROM outbox'),
      countPending: q('SELECT count(*) AS n FROM endpoints WHERE pending_since IS NOT NULL'),
      expired: q('SELECT id FROM endpoints WHERE pending_since IS NOT NULL AND pending_since < ? ORDER BY pending_since LIMIT ?'),
      eventIds: q('SELECT event_ids FROM endpoints WHERE id = ?'),
      logEvent: q('INSERT INTO event_log (endpoint_id, version, record, created_at, message_number) VALUES (?, ?, ?, ?, ?)'),
      logChange: q('INSERT INTO change_log (position, endpoint_id, version, created_at) VALUES (?, ?, ?, ?)'),
      // Entries after ?1 within the age limit, with their events' sizes (octet_length, as eventSizes:
      // no record is loaded here); NULL bytes: the endpoint's log no longer keeps that event.
      changeSizes: q(
        `SELECT c.position, c.endpoint_id, c.version, octet_length(e.record) AS bytes
         FROM change_log c LEFT JOIN event_log e ON e.id = c.position AND e.endpoint_id = c.endpoint_id
         WHERE c.position > ?1 AND c.created_at >= ?2 ORDER BY c.position LIMIT ?3`,
      ),
      newestChange: q('SELECT coalesce(max(position), 0) AS n FROM change_log'),
      // The oldest entry within the age limit: entries are in commit order, so those past it are a prefix.
      firstChange: q('SELECT position AS n FROM change_log WHERE created_at >= ? ORDER BY position LIMIT 1'),
      // As pruneEvents, a batch of the oldest entries at a time; the newest entry always stays.
      pruneChanges: q(
        `DELETE FROM change_log WHERE position IN (
           SELECT position FROM (SELECT position, created_at FROM change_log ORDER BY position LIMIT ?3)
           WHERE position < (SELECT max(position) FROM change_log)
             AND (created_at < ?1 OR position <= (SELECT max(position) FROM change_log) - ?2))`,
      ),
      // By ID and endpoint: the ID comes from the endpoint's own list.
      dropEvent: q('DELETE FROM event_log WHERE id = ? AND endpoint_id = ?'),
      dropEndpointEvents: q(
        `DELETE FROM event_log WHERE endpoint_id = ?1
           AND id IN (SELECT value FROM json_each((SELECT event_ids FROM endpoints WHERE id = ?1)))`,
      ),
      // The endpoint's listed events (?1, its list of IDs) after version ?3, with their sizes:
      // octet_length reads a TEXT value's length from the row header without loading the value, so
      // this costs the same for records of any size. Nothing stored after the record (created_at) is
      // read here: reaching it walks every page of the record. The records are then read one by one,
      // with their age.
      eventSizes: q(
        `SELECT e.id, e.version, octet_length(e.record) AS bytes FROM json_each(?1) j JOIN event_log e ON e.id = j.value
         WHERE e.endpoint_id = ?2 AND e.version > ?3 ORDER BY e.version LIMIT ?4`,
      ),
      // As bytes: a replay writes them as they are, and no string of a large record enters the JS heap.
      eventRecord: q('SELECT CAST(record AS BLOB) AS record, created_at, message_number FROM event_log WHERE id = ? AND endpoint_id = ?'),
      // The log is in commit order, so the events past the age limit are a prefix of it: each batch
      // looks at the oldest rows only (never the whole table), and a row stamped later than its
      // successors (a clock step back) only holds the sweep up until it ages itself.
      pruneEvents: q(
        `DELETE FROM event_log WHERE id IN (
           SELECT id FROM (SELECT id, created_at FROM event_log ORDER BY id LIMIT ?2) WHERE created_at < ?1)`,
      ),
      unindex: q('DELETE FROM channel_index WHERE endpoint_id = ?'),
      index: q('INSERT INTO channel_index (platform, channel, endpoint_id, bridge) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING'),
      lookup: q(
        'SELECT endpoint_id AS endpoint, bridge FROM channel_index WHERE platform = ? AND channel = ? ORDER BY endpoint_id, bridge LIMIT ?',
      ),
      dropDeliveryTo: q('DELETE FROM outbox WHERE endpoint_id = ? AND platform = ? AND url = ?'),
    };
  }

  private migrate(): void {
    const { user_version: done } = this.db.prepare('PRAGMA user_version').get() as { user_version: number };
    if (done > MIGRATIONS.length) {
      // A newer release has migrated this file further: refuse, naming both versions, rather than fail
      // later on a statement this release's schema expects.
      this.db.close();
      throw new Error(`the SQLite file has schema version ${done}, newer than this release's ${MIGRATIONS.length}: run the newer release`);
    }
    for (let v = done; v < MIGRATIONS.length; v++) {
      this.transaction(() => {
        this.db.exec(MIGRATIONS[v]!);
        this.db.exec(`PRAGMA user_version = ${v + 1}`);
      });
    }
  }

  /** BEGIN IMMEDIATE, then the cache drops what another process may have committed since its last check. */
  private begin(): void {
    this.tx.begin.run();
    this.cache.revalidate();
  }

  private transaction<T>(work: () => T): T {
    this.begin();
    try {
      const result = work();
      this.tx.commit.run();
      return result;
    } catch (error) {
      this.rollback();
      throw error;
    }
  }

  /**
   * Ends the open transaction without its changes. SQLite may already have rolled it back itself
   * (after some errors, a failed COMMIT among them); a ROLLBACK then would throw and hide the error.
   */
  private rollback(): void {
    if (this.db.isTransaction) this.db.exec('ROLLBACK');
  }

  /**
   * Appends the event of `version` to the log and drops the endpoint's events beyond the window;
   * returns the endpoint's new list, for the row's write in the same transaction. `listed`: the row's
   * list when this process knows it (a row it committed), else it is read from the row.
   */
  private logEvent(id: string, version: number, json: string, messageNumber: number | null, listed: EventList | undefined): EventList {
    const before = listed ?? this.listedEvents(id);
    const now = this.clock();
    const added = Number(this.stmts.logEvent.run(id, version, json, now, messageNumber).lastInsertRowid);
    this.stmts.logChange.run(added, id, version, now);
    let text = before.count === 0 ? `[${added}]` : `${before.text.slice(0, -1)},${added}]`;
    let count = before.count + 1;
    for (; count > this.window.maxEvents; count--) {
      const comma = text.indexOf(','); // -1: the list's last entry
      this.stmts.dropEvent.run(Number(text.slice(1, comma === -1 ? -1 : comma)), id);
      text = comma === -1 ? '[]' : `[${text.slice(comma + 1)}`;
    }
    return { text, count };
  }

  private listedEvents(id: string): EventList {
    const text = (this.stmts.eventIds.get(id) as { event_ids: string } | undefined)?.event_ids ?? '[]';
    let count = text === '[]' ? 0 : 1;
    for (let at = text.indexOf(','); at !== -1; at = text.indexOf(',', at + 1)) count++;
    return { text, count };
  }

  private read(id: string): StoredEndpoint | undefined {
    return this.cache.get(id, this.db.isTransaction, () => toStored(this.stmts.get.get(id) as EndpointRow | undefined));
  }

  /** Reads the row inside the caller's transaction, lets `decide` choose, and writes what it decided. */
  private decideAndWrite<T>(id: string, decide: (current: StoredEndpoint | undefined) => Decision<T>): Written<T> {
    const current = this.read(id);
    return this.commit(id, current, decide(current));
  }

  /**
   * Writes what `decide` decided, inside the caller's transaction: the row (its version + 1), the
   * event of that version, the pruned log and the outbox. Returns the new row, if it wrote.
   */
  private commit<T>(id: string, current: StoredEndpoint | undefined, { write, result }: Decision<T>): Written<T> {
    if (!write || !current) return { result }; // nothing to write, or no such row
    const { record, state, deliveries = [] } = write;
    const json = write.recordJson ?? JSON.stringify(record);
    this.cache.evict(id); // until the commit: reads later in this transaction see the new row
    const version = current.version + 1;
    const events = this.logEvent(id, version, json, messageNumberOf(state), current instanceof CommittedRow ? current.events : undefined);
    // `current` was read in this transaction, so the row is there at that version; if not, the throw
    // undoes the logged event with the rest of this update (runBatch's or transaction's rollback).
    const queue = queueJson(state.queue);
    if (this.stmts.write.run(json, state.seq, state.pendingSince, events.text, id, current.version, queue).changes !== 1) {
      throw new Error(`endpoint ${id} changed under its write`);
    }
    if (write.messages) this.messages.apply(id, write.messages);
    if (state.pendingSince === null) this.stmts.dropStale.run(id);
    for (const d of write.dropDeliveriesTo ?? []) this.stmts.dropDeliveryTo.run(id, d.platform, d.url);
    const entries = changedChannelEntries(current.recordJson, record);
    if (entries) this.indexChannels(id, entries, true);
    for (const d of deliveries) this.stmts.enqueue.run(id, state.seq, d.platform, d.url, d.payload, d.expiresAt);
    const row = new CommittedRow(
      { token_hash: current.tokenHash, record: json, message_seq: state.seq, pending_since: state.pendingSince, version, queue },
      events,
    );
    return { result, row };
  }

  /** Writes the endpoint's lookup-index rows, inside the caller's transaction (`replace`: its old ones go first). */
  private indexChannels(id: string, entries: ChannelEntry[], replace: boolean): void {
    if (replace) this.stmts.unindex.run(id);
    for (const e of entries) this.stmts.index.run(e.platform, e.channel, id, e.bridge);
  }

  /**
   * After the commit: the written row goes into the cache (the next update or read of this endpoint
   * needs no SQLite read or parse of it), and the change feed hears of the new version.
   */
  private committed<T>(id: string, { result, row }: Written<T>): T {
    if (row) {
      this.cache.remember(id, row);
      this.hub.publish(id, row.version);
    }
    return result;
  }

  async get(id: string): Promise<StoredEndpoint | undefined> {
    return this.read(id);
  }

  observeGroupCommits(listener: (commit: GroupCommitTiming) => void): void {
    this.groupCommitListeners.push(listener);
  }

  async update<T>(id: string, decide: (current: StoredEndpoint | undefined) => Decision<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.queued.length === 0) setImmediate(() => this.groupCommit());
      this.queued.push({
        since: performance.now(),
        id,
        run: () => this.decideAndWrite(id, decide),
        resolve: resolve as (v: unknown) => void,
        reject,
      });
    });
  }

  /**
   * Group commit: the updates queued during one event-loop turn run in one transaction and are all
   * acknowledged after the single COMMIT. One fsync covers the batch, and nothing is acknowledged
   * before it is durable; an fsync per update would bound throughput.
   */
  private groupCommit(): void {
    const lastDelayMs = this.lockRetry?.delayMs;
    if (this.lockRetry) {
      clearTimeout(this.lockRetry.timer); // close() commits at once
      this.lockRetry = undefined;
    }
    const batch = this.queued.splice(0);
    if (batch.length === 0) return;
    const fail = (error: unknown) => {
      for (const item of batch) item.reject(error);
    };
    if (!this.db.isOpen) return fail(new Error('the store is closed'));
    let outcomes: Outcome[];
    const started = performance.now();
    let committing = started;
    try {
      outcomes = this.runBatch(batch);
      committing = performance.now();
      this.tx.commit.run();
    } catch (error) {
      this.rollback();
      if (isLockedByOther(error) && started - batch[0]!.since < this.lockWaitMs) return this.retryWhenUnlocked(batch, lastDelayMs);
      return fail(error);
    }
    const timing = { updates: batch.length, statementsMs: committing - started, commitMs: performance.now() - committing };
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(this.committed(item.id, outcome.value));
      else item.reject(outcome.error);
    });
    // After the batch is settled, so that a listener can delay no acknowledgement.
    for (const listener of this.groupCommitListeners) listener(timing);
  }

  /**
   * Another process holds the write lock: the batch goes back to the front of the queue (updates
   * queued meanwhile join it) and is tried again on a timer, 2 ms later and doubling up to 50 ms,
   * so the event loop serves everything else while it waits.
   */
  private retryWhenUnlocked(batch: QueuedUpdate[], lastDelayMs = 1): void {
    this.queued.unshift(...batch);
    const delayMs = Math.min(50, lastDelayMs * 2);
    this.lockRetry = { timer: setTimeout(() => this.groupCommit(), delayMs), delayMs };
  }

  /**
   * Runs a batch's updates inside a new transaction, in order, each seeing the ones before it. First
   * all together: updates almost never throw, and a SAVEPOINT and RELEASE around each cost ~2.5% of
   * an update. If one throws, that attempt is rolled back and the batch runs again with a savepoint
   * per update, so the one that throws is undone alone (decisions may run more than once: see the
   * port). Leaves the transaction open for the caller's COMMIT.
   */
  private runBatch(batch: QueuedUpdate[]): Outcome[] {
    this.begin();
    try {
      return batch.map((item) => ({ ok: true, value: item.run() }));
    } catch {
      this.rollback();
    }
    this.begin();
    return batch.map((item) => {
      this.tx.savepoint.run();
      try {
        const value = item.run();
        this.tx.release.run();
        return { ok: true, value };
      } catch (error) {
        // Some failures (a full disk, an I/O error) make SQLite roll the whole transaction back: no
        // savepoint is left to return to, and the batch fails with that error (an outage: 503).
        if (!this.db.isTransaction) throw error;
        this.tx.rollbackTo.run();
        this.tx.release.run();
        return { ok: false, error };
      }
    });
  }

  async create(id: string, tokenHash: Uint8Array, record: EndpointRecord): Promise<boolean> {
    const entries = channelEntries(record);
    if (entries.length === 0) return this.stmts.create.run(id, tokenHash, JSON.stringify(record)).changes === 1;
    return this.transaction(() => {
      const created = this.stmts.create.run(id, tokenHash, JSON.stringify(record)).changes === 1;
      if (created) this.indexChannels(id, entries, false);
      return created;
    });
  }

  async setTokenHash(id: string, tokenHash: Uint8Array): Promise<boolean> {
    this.cache.evict(id);
    // Streams authenticated with the old token hear of it and end.
    return this.notified(id, this.stmts.setToken.get(tokenHash, id));
  }

  async delete(id: string): Promise<boolean> {
    this.cache.evict(id);
    // Its events go first (listed in its row); its outbox entries go with it (ON DELETE CASCADE); its
    // streams hear of it and end.
    return this.notified(
      id,
      this.transaction(() => {
        this.stmts.dropEndpointEvents.run(id);
        return this.stmts.delete.get(id);
      }),
    );
  }

  async createBot(bot: StoredBot): Promise<boolean> {
    return (
      this.db
        .prepare('INSERT INTO bots (id, platform, key_hash) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING')
        .run(bot.id, bot.platform, bot.keyHash).changes === 1
    );
  }

  async setBotKeyHash(id: string, keyHash: Uint8Array): Promise<boolean> {
    return this.db.prepare('UPDATE bots SET key_hash = ? WHERE id = ?').run(keyHash, id).changes === 1;
  }

  async deleteBot(id: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM bots WHERE id = ?').run(id).changes === 1;
  }

  async listBots(): Promise<StoredBot[]> {
    return this.botsNow();
  }

  /** Every bot, read synchronously (inside a transaction too). */
  private botsNow(): StoredBot[] {
    const rows = this.db.prepare('SELECT id, platform, key_hash FROM bots ORDER BY id').all() as {
      id: string;
      platform: Platform;
      key_hash: Uint8Array;
    }[];
    return rows.map((r) => ({ id: r.id, platform: r.platform, keyHash: r.key_hash }));
  }

  private notified(id: string, row: unknown): boolean {
    if (!row) return false;
    this.hub.publish(id, (row as { version: number }).version);
    return true;
  }

  async listIds(after: string | undefined, limit: number): Promise<string[]> {
    return (this.stmts.list.all(after ?? '', limit) as { id: string }[]).map((r) => r.id);
  }

  async lookupChannel(platform: Platform, channel: string, limit: number): Promise<ChannelMatch[]> {
    return (this.stmts.lookup.all(platform, channel, limit) as unknown as ChannelMatch[]).map((r) => ({
      endpoint: r.endpoint,
      bridge: r.bridge,
    }));
  }

  async claimDeliveries(
    now: number,
    leaseMs: number,
    limits: number | Partial<Record<Platform, number>>,
    skip?: Partial<Record<Platform, readonly string[]>>,
  ): Promise<Delivery[]> {
    const lanes = claimLanes(limits, skip);
    if (lanes.length === 0) return [];
    // One transaction for every lane: one commit (and fsync, if anything was claimed) on the event loop.
    return this.transaction(() =>
      lanes.flatMap(([to, limit, passOver]) =>
        (this.stmts.claim.all(now + leaseMs, now, to, JSON.stringify(passOver), limit) as unknown as OutboxRow[]).map(toDelivery),
      ),
    );
  }

  async completeDelivery<T>(
    delivery: Delivery,
    decide: (current: StoredEndpoint | undefined, stillQueued: boolean) => Decision<T>,
  ): Promise<T> {
    const outcome = this.transaction(() => {
      const stillQueued = this.stmts.dequeue.run(delivery.id).changes === 1;
      return this.decideAndWrite(delivery.endpointId, (current) => decide(current, stillQueued));
    });
    return this.committed(delivery.endpointId, outcome);
  }

  async retryDelivery(id: number, nextAttemptAt: number): Promise<void> {
    this.stmts.retry.run(nextAttemptAt, id);
  }

  async dropDelivery(id: number): Promise<void> {
    this.stmts.dequeue.run(id);
  }

  async holdDeliveries(endpointId: string, platform: Platform, url: string, until: number): Promise<void> {
    this.stmts.hold.run(endpointId, platform, url, until);
  }

  async countDeliveries(): Promise<number> {
    return (this.stmts.count.get() as { n: number }).n;
  }

  async countPending(): Promise<number> {
    return (this.stmts.countPending.get() as { n: number }).n;
  }

  async listExpired(pendingBefore: number, limit: number): Promise<string[]> {
    return (this.stmts.expired.all(pendingBefore, limit) as { id: number | string }[]).map((r) => String(r.id));
  }

  /**
   * The endpoint's list of event IDs comes from the row this process committed when it is cached, and
   * is read on its own otherwise (a statement that reads the list from the row with the record: the
   * list is stored after the record, and reading it walks the record's pages once, not once per event).
   */
  async eventsSince(id: string, afterVersion: number, limit: number, maxBytes = Number.MAX_SAFE_INTEGER): Promise<EndpointEvent[]> {
    const row = this.read(id);
    if (!row || row.version <= afterVersion) return [];
    const listed = row instanceof CommittedRow ? row.events.text : this.listedEvents(id).text;
    const since = this.clock() - this.window.maxAgeMs;
    const sized = this.stmts.eventSizes.all(listed, id, afterVersion, limit) as unknown as { id: number; version: number; bytes: number }[];
    const events: EndpointEvent[] = [];
    let total = 0;
    for (const { id: eventId, version, bytes } of sized) {
      if (events.length > 0 && total + bytes > maxBytes) break;
      const found = this.stmts.eventRecord.get(eventId, id) as
        | { record: Uint8Array; created_at: number; message_number: number | null }
        | undefined;
      if (!found) break; // swept by another process since it was sized: the events after it wait for the next read
      // Past the age limit: never returned. Such events are the oldest, so they come first.
      if (found.created_at < since) continue;
      events.push(new LoggedEvent({ version, bytes, record: found.record, message_number: found.message_number }));
      total += bytes;
    }
    return events;
  }

  /** Sized first, then the records read one by one, as eventsSince. */
  async changesSince(afterPosition: number, limit: number, maxBytes = Number.MAX_SAFE_INTEGER): Promise<ChangeRead> {
    const since = this.clock() - this.changeWindow.maxAgeMs;
    const sized = this.stmts.changeSizes.all(afterPosition, since, limit) as unknown as {
      position: number;
      endpoint_id: string;
      version: number;
      bytes: number | null;
    }[];
    const entries: ChangeEntry[] = [];
    let total = 0;
    for (const { position, endpoint_id: endpointId, version, bytes } of sized) {
      if (entries.length > 0 && total + (bytes ?? 0) > maxBytes) break;
      const found =
        bytes === null
          ? undefined
          : (this.stmts.eventRecord.get(position, endpointId) as { record: Uint8Array; message_number: number | null } | undefined);
      const event = found && new LoggedEvent({ version, bytes: bytes!, record: found.record, message_number: found.message_number });
      entries.push({ position, endpointId, version, event });
      total += bytes ?? 0;
    }
    const newest = (this.stmts.newestChange.get() as { n: number }).n;
    return {
      entries,
      newest,
      missed: missedChanges(afterPosition, entries, newest, () => (this.stmts.firstChange.get(since) as { n: number } | undefined)?.n),
    };
  }

  /** In batches, yielding between them: node:sqlite blocks the event loop while a statement runs. */
  async pruneEvents(): Promise<number> {
    const now = this.clock();
    const before = now - this.window.maxAgeMs;
    const changesBefore = now - this.changeWindow.maxAgeMs;
    let total = 0;
    for (const [prune, args] of [
      [this.stmts.pruneEvents, [before, PRUNE_BATCH]],
      [this.stmts.pruneChanges, [changesBefore, this.changeWindow.maxChanges, PRUNE_BATCH]],
    ] as const) {
      while (this.db.isOpen) {
        const deleted = Number(prune.run(...args).changes);
        total += deleted;
        if (deleted < PRUNE_BATCH) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return total;
  }

  /**
   * The in-process hub hears this process's commits. Another process's (the CLI rotating a token or
   * deleting an endpoint) change `PRAGMA data_version`, checked every `othersCheckMs`: then every
   * stream looks again, and one whose token was rotated or whose endpoint was deleted ends. Without
   * this it went on until its next heartbeat.
   */
  async openChangeFeed(): Promise<ChangeFeed> {
    if (!this.othersWatch) {
      const dataVersion = this.db.prepare('PRAGMA data_version');
      let seen = dataVersion.get();
      this.othersWatch = setInterval(() => {
        const now = dataVersion.get();
        if ((now as { data_version: number }).data_version === (seen as { data_version: number }).data_version) return;
        seen = now;
        this.hub.publishToAll();
      }, this.othersCheckMs);
      this.othersWatch.unref();
    }
    return this.hub.feed();
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    clearInterval(this.othersWatch);
    this.groupCommit(); // updates already accepted are committed, not dropped
    if (this.db.isOpen) this.db.close();
  }

  /** Statements of exportRows and importRows, prepared on first use (most processes never move a store). */
  private snapshotStatements:
    | Record<
        | 'page'
        | 'stage'
        | 'stageDelivery'
        | 'stageMessage'
        | 'conflicts'
        | 'existing'
        | 'markFresh'
        | 'insert'
        | 'insertDeliveries'
        | 'insertMessages'
        | 'indexInserted',
        StatementSync
      >
    | undefined;

  private snapshots() {
    if (this.snapshotStatements) return this.snapshotStatements;
    // Staging tables of an import: TEMP, so they live on this connection only and take no lock of
    // the store's file while rows arrive.
    this.db.exec(`CREATE TEMP TABLE IF NOT EXISTS import_endpoints (
                    id TEXT PRIMARY KEY, token_hash BLOB NOT NULL, record TEXT NOT NULL, message_seq INTEGER NOT NULL,
                    pending_since INTEGER, version INTEGER NOT NULL, queue TEXT NOT NULL, fresh INTEGER NOT NULL DEFAULT 0) STRICT;
                  CREATE TEMP TABLE IF NOT EXISTS import_messages (
                    endpoint_id TEXT NOT NULL, number INTEGER NOT NULL, sender TEXT, sender_channel TEXT, message TEXT NOT NULL,
                    unread INTEGER NOT NULL, expired INTEGER NOT NULL, created_at INTEGER NOT NULL) STRICT;
                  CREATE TEMP TABLE IF NOT EXISTS import_deliveries (
                    endpoint_id TEXT NOT NULL, message_seq INTEGER NOT NULL, platform TEXT NOT NULL, url TEXT NOT NULL,
                    payload TEXT NOT NULL, attempts INTEGER NOT NULL, next_attempt_at INTEGER NOT NULL, expires_at INTEGER NOT NULL) STRICT;`);
    const q = (sql: string) => this.db.prepare(sql);
    this.snapshotStatements = {
      page: q(
        `SELECT e.id, e.token_hash, e.record, e.message_seq, e.pending_since, e.version, e.queue,
           (SELECT json_group_array(json_object('messageSeq', o.message_seq, 'platform', o.platform, 'url', o.url, 'payload', o.payload,
                                                'attempts', o.attempts, 'nextAttemptAt', o.next_attempt_at, 'expiresAt', o.expires_at))
              FROM (SELECT * FROM outbox WHERE endpoint_id = e.id ORDER BY id) o) AS deliveries,
           (SELECT json_group_array(json_object('number', m.number, 'sender', m.sender, 'senderChannel', m.sender_channel,
                                                'message', m.message, 'unread', m.unread, 'expired', m.expired, 'createdAt', m.created_at))
              FROM (SELECT * FROM messages WHERE endpoint_id = e.id ORDER BY number) m) AS messages
         FROM endpoints e WHERE e.id > ? ORDER BY e.id LIMIT ?`,
      ),
      stage: q(
        'INSERT INTO import_endpoints (id, token_hash, record, message_seq, pending_since, version, queue) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      stageMessage: q(
        `INSERT INTO import_messages (endpoint_id, number, sender, sender_channel, message, unread, expired, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertMessages: q(
        `INSERT INTO messages (endpoint_id, number, sender, sender_channel, message, unread, expired, created_at)
         SELECT m.endpoint_id, m.number, m.sender, m.sender_channel, m.message, m.unread, m.expired, m.created_at
         FROM import_messages m JOIN import_endpoints s ON s.id = m.endpoint_id WHERE s.fresh = 1`,
      ),
      stageDelivery: q(
        `INSERT INTO import_deliveries (endpoint_id, message_seq, platform, url, payload, attempts, next_attempt_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      conflicts: q(
        `SELECT s.id FROM import_endpoints s JOIN endpoints e ON e.id = s.id
         WHERE e.token_hash <> s.token_hash OR e.record <> s.record OR e.message_seq <> s.message_seq
            OR e.pending_since IS NOT s.pending_since OR e.version <> s.version OR e.queue <> s.queue
         ORDER BY s.id`,
      ),
      existing: q('SELECT count(*) AS n FROM import_endpoints s JOIN endpoints e ON e.id = s.id'),
      markFresh: q('UPDATE import_endpoints SET fresh = 1 WHERE id NOT IN (SELECT id FROM endpoints)'),
      insert: q(
        `INSERT INTO endpoints (id, token_hash, record, message_seq, pending_since, version, queue)
         SELECT id, token_hash, record, message_seq, pending_since, version, queue FROM import_endpoints WHERE fresh = 1`,
      ),
      insertDeliveries: q(
        `INSERT INTO outbox (endpoint_id, message_seq, platform, url, payload, attempts, next_attempt_at, expires_at)
         SELECT d.endpoint_id, d.message_seq, d.platform, d.url, d.payload, d.attempts, d.next_attempt_at, d.expires_at
         FROM import_deliveries d JOIN import_endpoints s ON s.id = d.endpoint_id WHERE s.fresh = 1 ORDER BY d.rowid`,
      ),
      indexInserted: q(indexRecordsOf('import_endpoints', 'e.fresh = 1')),
    };
    return this.snapshotStatements;
  }

  async *exportRows(): AsyncIterable<EndpointSnapshot> {
    const { page } = this.snapshots();
    let after = '';
    for (;;) {
      const rows: EndpointSnapshot[] = [];
      for (const row of page.iterate(after, SNAPSHOT_PAGE_ROWS)) rows.push(toSnapshot(row as unknown as SnapshotRow));
      yield* rows;
      if (rows.length < SNAPSHOT_PAGE_ROWS) return;
      after = rows[rows.length - 1]!.id;
    }
  }

  /**
   * Rows are staged in TEMP tables a batch at a time (each batch its own short transaction, taken and
   * ended within one synchronous step, so no update of this process ever runs inside it), then merged
   * into the store in one IMMEDIATE transaction, also synchronous: all rows or none.
   */
  async importRows(
    rows: AsyncIterable<EndpointSnapshot> | Iterable<EndpointSnapshot>,
    bots?: readonly StoredBot[],
  ): Promise<ImportOutcome> {
    const st = this.snapshots();
    this.db.exec('DELETE FROM import_endpoints; DELETE FROM import_deliveries; DELETE FROM import_messages;');
    try {
      for await (const batch of batchesOf(rows, SNAPSHOT_PAGE_ROWS)) {
        this.db.exec('BEGIN');
        try {
          for (const r of batch) {
            st.stage.run(r.id, r.tokenHash, r.recordJson, r.state.seq, r.state.pendingSince, r.version, queueJson(r.state.queue));
            for (const d of r.deliveries) {
              st.stageDelivery.run(r.id, d.messageSeq, d.platform, d.url, d.payload, d.attempts, d.nextAttemptAt, d.expiresAt);
            }
            for (const m of r.messages) {
              st.stageMessage.run(r.id, m.number, m.sender, m.senderChannel, m.message, m.unread, m.expired, m.createdAt);
            }
          }
          this.db.exec('COMMIT');
        } catch (error) {
          this.rollback();
          throw error;
        }
      }
      return this.transaction(() => {
        const conflicts = (st.conflicts.all() as { id: string }[]).map((r) => r.id);
        const unchanged = (st.existing.get() as { n: number }).n - conflicts.length;
        const botPlan = bots && planBotImport(this.botsNow(), bots);
        const botOutcome = (imported: number) =>
          botPlan && { bots: { imported, unchanged: botPlan.unchanged, conflicts: botPlan.conflicts } };
        if (conflicts.length > 0 || (botPlan?.conflicts.length ?? 0) > 0) return { imported: 0, unchanged, conflicts, ...botOutcome(0) };
        st.markFresh.run();
        const imported = Number(st.insert.run().changes);
        st.insertDeliveries.run();
        st.insertMessages.run();
        st.indexInserted.run();
        const insertBot = this.db.prepare('INSERT INTO bots (id, platform, key_hash) VALUES (?, ?, ?)');
        for (const bot of botPlan?.fresh ?? []) insertBot.run(bot.id, bot.platform, bot.keyHash);
        return { imported, unchanged, conflicts, ...botOutcome(botPlan?.fresh.length ?? 0) };
      });
    } finally {
      if (this.db.isOpen) this.db.exec('DELETE FROM import_endpoints; DELETE FROM import_deliveries; DELETE FROM import_messages;');
    }
  }
}
