// The embedded store: one SQLite file through node:sqlite (no native build). WAL mode with
// synchronous=FULL, so a write is on disk before it is acknowledged. node:sqlite is synchronous;
// BEGIN IMMEDIATE serialises writers across processes (the CLI may run beside the server).
//
// Writes go through one queue, flushed once per event-loop turn (group commit: one transaction and
// one fsync for all of them). Updates are decided on the main thread and committed by a writer thread
// (sqliteWriter.ts) while the main thread serves further requests; the other writes (admin, outbox)
// run on the main thread between two batches, never while one is in flight, so they do not wait for
// its lock.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';
import { RowCache } from './rowCache.ts';
import { type EndpointRow, type OutboxRow, toDelivery, toStored } from './rows.ts';
import { deserializeError, type Batch, type BatchItem, type BatchResult, type WriterSettings } from './sqliteWriter.ts';
import { RowWriteStatements, openConnection } from './sqliteWrites.ts';
import type { EndpointRecord } from '../domain/record.ts';
import { ChangeHub, type ChangeFeed } from '../events/hub.ts';
import {
  DEFAULT_EVENT_WINDOW,
  type Decision,
  type Delivery,
  type EndpointEvent,
  type EndpointStore,
  type EventLogWindow,
  type StoredEndpoint,
} from './port.ts';

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
  // The commit clock: moves with every change of an endpoint row, by any connection, so the row
  // cache can tell another process's commits from this one's (see rowCache.ts).
  `CREATE TABLE commit_clock (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL) STRICT;
   INSERT INTO commit_clock (id, n) VALUES (1, 0);
   CREATE TRIGGER endpoints_insert_clock AFTER INSERT ON endpoints BEGIN UPDATE commit_clock SET n = n + 1; END;
   CREATE TRIGGER endpoints_update_clock AFTER UPDATE ON endpoints BEGIN UPDATE commit_clock SET n = n + 1; END;
   CREATE TRIGGER endpoints_delete_clock AFTER DELETE ON endpoints BEGIN UPDATE commit_clock SET n = n + 1; END;`,
];

export interface SqliteStoreOptions {
  /** Epoch milliseconds, for the event log's timestamps and age limit (default Date.now). */
  clock?: () => number;
  /** Replay window of the event log (default: the last 100 events, none older than 10 minutes). */
  eventWindow?: Partial<EventLogWindow>;
  /** Committed rows kept in memory for reads (default 10,000; 0 turns the cache off). */
  cachedRows?: number;
  /**
   * Who commits updates: a writer thread (default; started at the first update) or the main thread
   * ('inline'; always for ':memory:', which a second connection cannot open).
   */
  writer?: 'thread' | 'inline';
}

const DEFAULT_CACHED_ROWS = 10_000;

/** The event-log sweep deletes at most this many rows per statement (a few milliseconds). */
const PRUNE_BATCH = 1_000;

/** The writer thread's heap: it holds one batch at a time, at most MAX_BATCH records. */
const WRITER_LIMITS = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 };
const MAX_BATCH = 1_000;

/** Conflicts after which an update is decided again under the write lock instead (see retried). */
const CONFLICT_RETRIES = 3;

/** What a transaction's write step returns: the caller's result and, if it wrote, the new row. */
interface Written<T> {
  result: T;
  row?: StoredEndpoint;
}

interface QueuedUpdate {
  kind: 'update';
  /** Times the writer thread found its row changed since the decision. */
  conflicts?: number;
  id: string;
  decide: (current: StoredEndpoint | undefined) => Decision<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** A write of the main thread's connection (admin, outbox), run between two update batches. */
interface QueuedLocal {
  kind: 'local';
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** An update of the batch in flight: its decided result, and the row it writes (if any). */
interface AwaitingCommit {
  update: QueuedUpdate;
  result: unknown;
  row?: StoredEndpoint;
}

type TransactionStatement = 'begin' | 'commit' | 'savepoint' | 'release' | 'rollbackTo';

type StatementName =
  | 'get'
  | 'create'
  | 'setToken'
  | 'delete'
  | 'list'
  | 'claim'
  | 'dequeue'
  | 'retry'
  | 'count'
  | 'countPending'
  | 'expired'
  | 'eventsSince'
  | 'pruneEvents';

export class SqliteEndpointStore implements EndpointStore {
  readonly kind = 'sqlite';
  private readonly path: string;
  private readonly db: DatabaseSync;
  private readonly stmts: Record<StatementName, StatementSync>;
  /** Transaction control as prepared statements: exec() would compile them on every update. */
  private readonly tx: Record<TransactionStatement, StatementSync>;
  private readonly writes: RowWriteStatements;
  private readonly clock: () => number;
  private readonly window: EventLogWindow;
  private readonly hub = new ChangeHub();
  private readonly cache: RowCache;
  private writerMode: 'thread' | 'inline';
  private writer: Worker | undefined;
  /** Writes waiting for the next flush, in arrival order. */
  private readonly queued: (QueuedUpdate | QueuedLocal)[] = [];
  private flushScheduled = false;
  /** Batches sent to the writer thread and not answered yet, by number. */
  private readonly inFlight = new Map<number, AwaitingCommit[]>();
  private sentSeq = 0;
  /** The last batch answered. */
  private seenSeq = 0;
  /** Rows decided and sent, not committed yet: the next decisions build on them. */
  private readonly overlay = new Map<string, StoredEndpoint>();
  /** close() waits for these: called once nothing is queued or in flight. */
  private drainWaiters: (() => void)[] = [];
  private closing = false;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.path = path;
    this.clock = options.clock ?? Date.now;
    this.window = { ...DEFAULT_EVENT_WINDOW, ...options.eventWindow };
    this.writerMode = path === ':memory:' ? 'inline' : (options.writer ?? 'thread');
    this.db = openConnection(path);
    const q = (sql: string) => this.db.prepare(sql);
    this.tx = {
      begin: q('BEGIN IMMEDIATE'),
      commit: q('COMMIT'),
      savepoint: q('SAVEPOINT item'),
      release: q('RELEASE item'),
      rollbackTo: q('ROLLBACK TO item'),
    };
    this.migrate();
    this.writes = new RowWriteStatements(this.db, this.window.maxEvents);
    this.cache = new RowCache(() => this.writes.clock(), options.cachedRows ?? DEFAULT_CACHED_ROWS);
    this.stmts = {
      get: q('SELECT token_hash, record, message_seq, pending_since, version FROM endpoints WHERE id = ?'),
      create: q('INSERT INTO endpoints (id, token_hash, record) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING'),
      setToken: q('UPDATE endpoints SET token_hash = ? WHERE id = ? RETURNING version'),
      delete: q('DELETE FROM endpoints WHERE id = ? RETURNING version'),
      list: q('SELECT id FROM endpoints WHERE id > ? ORDER BY id LIMIT ?'),
      claim: q(
        `UPDATE outbox SET lease_until = ?, attempts = attempts + 1
         WHERE id IN (SELECT id FROM outbox WHERE next_attempt_at <= ? AND lease_until <= ? AND expires_at > ?
                      ORDER BY next_attempt_at, id LIMIT ?)
         RETURNING id, endpoint_id, message_seq, platform, url, payload, attempts, expires_at`,
      ),
      dequeue: q('DELETE FROM outbox WHERE id = ?'),
      retry: q('UPDATE outbox SET next_attempt_at = ?, lease_until = 0 WHERE id = ?'),
      count: q('SELECT count(*) AS n FROM outbox'),
      countPending: q('SELECT count(*) AS n FROM endpoints WHERE pending_since IS NOT NULL'),
      expired: q('SELECT id FROM endpoints WHERE pending_since IS NOT NULL AND pending_since < ? ORDER BY pending_since LIMIT ?'),
      eventsSince: q(
        `SELECT version, record FROM endpoint_events WHERE endpoint_id = ? AND version > ? AND created_at >= ?
         ORDER BY version LIMIT ?`,
      ),
      pruneEvents: q('DELETE FROM endpoint_events WHERE rowid IN (SELECT rowid FROM endpoint_events WHERE created_at < ? LIMIT ?)'),
    };
  }

  private migrate(): void {
    const { user_version: done } = this.db.prepare('PRAGMA user_version').get() as { user_version: number };
    for (let v = done; v < MIGRATIONS.length; v++) {
      this.tx.begin.run();
      try {
        this.db.exec(MIGRATIONS[v]!);
        this.db.exec(`PRAGMA user_version = ${v + 1}`);
        this.tx.commit.run();
      } catch (error) {
        this.db.exec('ROLLBACK');
        throw error;
      }
    }
  }

  /**
   * A write transaction of the main thread's connection (run only while no batch is in flight). After
   * BEGIN IMMEDIATE the cache drops what another process may have committed since its last check.
   */
  private transaction<T>(work: () => T): T {
    this.tx.begin.run();
    try {
      const before = this.writes.clock();
      this.cache.reconcile(before, undefined);
      const result = work();
      const after = this.writes.clock();
      this.tx.commit.run();
      this.cache.reconcile(before, after);
      return result;
    } catch (error) {
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
  }

  private read(id: string): StoredEndpoint | undefined {
    return this.cache.get(id, this.db.isTransaction, () => toStored(this.stmts.get.get(id) as EndpointRow | undefined));
  }

  /** Reads the row inside the caller's transaction, lets `decide` choose, and writes what it decided. */
  private decideAndWrite<T>(id: string, decide: (current: StoredEndpoint | undefined) => Decision<T>): Written<T> {
    const current = this.read(id);
    const { write, result } = decide(current);
    if (!write || !current) return { result }; // nothing to write, or no such row
    const row = this.decidedRow(current, write);
    this.cache.evict(id); // until the commit: reads later in this transaction see the new row
    const version = this.writes.apply(id, rowWrite(current, row, write), this.clock());
    return version === undefined ? { result } : { result, row };
  }

  /** The row a write will commit: the decided record and state at the next version. */
  private decidedRow(current: StoredEndpoint, write: NonNullable<Decision<unknown>['write']>): StoredEndpoint {
    return toStored({
      token_hash: current.tokenHash,
      record: write.recordJson ?? JSON.stringify(write.record),
      message_seq: write.state.seq,
      pending_since: write.state.pendingSince,
      version: current.version + 1,
    })!;
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

  async update<T>(id: string, decide: (current: StoredEndpoint | undefined) => Decision<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.enqueue({ kind: 'update', id, decide, resolve: resolve as (v: unknown) => void, reject });
    });
  }

  /** Runs `run` on the main thread's connection at the next flush, between two update batches. */
  private local<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.enqueue({ kind: 'local', run, resolve: resolve as (v: unknown) => void, reject });
    });
  }

  private enqueue(entry: QueuedUpdate | QueuedLocal): void {
    this.queued.push(entry);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  /**
   * Group commit of everything queued: the main thread's own writes first, then the updates, as one
   * batch. The main thread's writes wait until no batch is in flight (the last answer flushes again),
   * so they take the write lock at once. Concurrent calls may take effect in any order; each takes
   * effect between its call and its answer.
   */
  private flush(): void {
    if (!this.db.isOpen) {
      const closed = new Error('the store is closed');
      this.queued.splice(0).forEach((e) => e.reject(closed));
    } else if (this.inFlight.size === 0 || !this.queued.some((e) => e.kind === 'local')) {
      const updates: QueuedUpdate[] = [];
      for (const entry of this.queued.splice(0)) {
        if (entry.kind === 'local') settle(entry);
        else if (updates.length < MAX_BATCH) updates.push(entry);
        else this.queued.push(entry); // the next batch
      }
      if (updates.length > 0) {
        const writer = this.writerThread();
        if (writer) this.send(writer, updates);
        else this.commitInline(updates);
      }
      if (this.queued.length > 0) this.scheduleFlush(); // more than one batch was waiting
    }
    if (this.inFlight.size === 0 && this.queued.length === 0) this.drainWaiters.splice(0).forEach((done) => done());
  }

  /**
   * The inline group commit: the updates in one transaction on this thread, each in its own savepoint
   * (one that throws is undone alone, in order, so each still sees the ones before it), all
   * acknowledged after the single COMMIT. Run only while no batch is in flight.
   */
  private commitInline(batch: QueuedUpdate[]): void {
    let outcomes: ({ ok: true; value: Written<unknown> } | { ok: false; error: unknown })[];
    try {
      outcomes = this.transaction(() =>
        batch.map((item) => {
          this.tx.savepoint.run();
          try {
            const value = this.decideAndWrite(item.id, item.decide);
            this.tx.release.run();
            return { ok: true as const, value };
          } catch (error) {
            this.tx.rollbackTo.run();
            this.tx.release.run();
            return { ok: false as const, error };
          }
        }),
      );
    } catch (error) {
      batch.forEach((item) => item.reject(error));
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(this.committed(item.id, outcome.value));
      else item.reject(outcome.error);
    });
  }

  /**
   * Decides each update on the newest row: one decided and sent but not yet committed (the overlay),
   * else the committed one; sends the writes to the writer thread as the next batch. Updates that
   * write nothing on a committed row are answered at once.
   */
  private send(writer: Worker, updates: QueuedUpdate[]): void {
    if (this.inFlight.size === 0) this.cache.revalidate(); // any movement of the clock is another process's
    const items: BatchItem[] = [];
    const awaiting: AwaitingCommit[] = [];
    for (const update of updates) {
      const current = this.overlay.get(update.id) ?? this.read(update.id);
      let decision: Decision<unknown>;
      try {
        decision = update.decide(current);
      } catch (error) {
        update.reject(error);
        continue;
      }
      const { write, result } = decision;
      if (write && current) {
        const row = this.decidedRow(current, write);
        this.overlay.set(update.id, row);
        items.push({ id: update.id, write: rowWrite(current, row, write) });
        awaiting.push({ update, result, row });
      } else if (this.overlay.has(update.id)) {
        items.push({ id: update.id }); // decided on a row not committed yet: holds only if that commits
        awaiting.push({ update, result });
      } else {
        update.resolve(result);
      }
    }
    if (items.length === 0) return;
    const seq = ++this.sentSeq;
    this.inFlight.set(seq, awaiting);
    this.cache.paused = true;
    writer.ref(); // a short-lived process (the CLI) must not exit before the commit
    writer.postMessage({ seq, basedOn: this.seenSeq, items, now: this.clock() } satisfies Batch);
  }

  /**
   * The writer thread's answer for one batch (in sending order): acknowledge, keep the committed rows,
   * queue conflicts to be decided again, flush what waited.
   */
  private committedBatch(outcome: BatchResult): void {
    const awaiting = this.inFlight.get(outcome.seq);
    if (!awaiting) return; // the thread was given up on
    this.inFlight.delete(outcome.seq);
    this.seenSeq = outcome.seq;
    if (this.inFlight.size === 0) {
      this.cache.paused = false;
      this.writer?.unref();
    }
    const again: QueuedUpdate[] = [];
    if (outcome.ok) this.cache.reconcile(outcome.before, outcome.after);
    awaiting.forEach(({ update, result, row }, i) => {
      const item = outcome.ok ? outcome.outcomes[i]! : ({ kind: 'error', error: outcome.error } as const);
      if (item.kind === 'ok') {
        if (this.overlay.get(update.id) === row) this.overlay.delete(update.id);
        return update.resolve(this.committed(update.id, { result, row }));
      }
      // Whatever was decided on top of this write fails too (the writer thread sees to it).
      this.overlay.delete(update.id);
      this.cache.evict(update.id);
      if (item.kind === 'error') return update.reject(deserializeError(item.error));
      again.push(update);
    });
    for (const update of again.reverse()) this.queued.unshift(this.retried(update));
    this.flush();
  }

  /**
   * An update whose row changed under its decision (another process wrote), to decide again: on the
   * next batch, and after CONFLICT_RETRIES such conflicts under the write lock on this thread, where
   * it cannot conflict.
   */
  private retried(update: QueuedUpdate): QueuedUpdate | QueuedLocal {
    const conflicts = (update.conflicts ?? 0) + 1;
    if (conflicts < CONFLICT_RETRIES) return { ...update, conflicts };
    return { kind: 'local', run: () => this.commitInline([update]), resolve: () => undefined, reject: update.reject };
  }

  /** The writer thread, started at the first update; undefined when updates commit inline. */
  private writerThread(): Worker | undefined {
    if (this.writerMode !== 'thread' || this.closing) return undefined;
    if (this.writer) return this.writer;
    const settings: WriterSettings = { role: 'chatbridge-sqlite-writer', path: this.path, maxEvents: this.window.maxEvents };
    const writer = new Worker(new URL('./sqliteWriter.ts', import.meta.url), { workerData: settings, resourceLimits: WRITER_LIMITS });
    writer.on('message', (outcome: BatchResult) => this.committedBatch(outcome));
    writer.on('error', (error) => this.writerLost(writer, error));
    writer.on('exit', (code) => this.writerLost(writer, new Error(`the SQLite writer thread exited (code ${code})`)));
    writer.unref();
    this.writer = writer;
    return writer;
  }

  /**
   * The writer thread failed: the batches in flight are reported as failed (they may or may not have
   * committed, as with a lost database connection), and updates commit inline from now on.
   */
  private writerLost(writer: Worker, error: Error): void {
    if (this.writer !== writer) return; // already handled, or closed
    this.writer = undefined;
    this.writerMode = 'inline';
    const awaiting = [...this.inFlight.values()].flat();
    this.inFlight.clear();
    this.overlay.clear();
    this.cache.paused = false;
    this.cache.clear();
    awaiting.forEach((a) => a.update.reject(error));
    this.flush();
  }

  async create(id: string, tokenHash: Uint8Array, record: EndpointRecord): Promise<boolean> {
    const json = JSON.stringify(record);
    return this.local(() => this.transaction(() => this.stmts.create.run(id, tokenHash, json).changes === 1));
  }

  async setTokenHash(id: string, tokenHash: Uint8Array): Promise<boolean> {
    // Streams authenticated with the old token hear of it and end.
    return this.local(() => this.changed(id, () => this.stmts.setToken.get(tokenHash, id)));
  }

  async delete(id: string): Promise<boolean> {
    // Its events and outbox entries go with it (ON DELETE CASCADE); its streams hear of it and end.
    return this.local(() => this.changed(id, () => this.stmts.delete.get(id)));
  }

  /** Rotation or deletion: commits `statement`, forgets the cached row, tells the change feed. */
  private changed(id: string, statement: () => unknown): boolean {
    const row = this.transaction(statement);
    this.cache.evict(id);
    if (!row) return false;
    this.hub.publish(id, (row as { version: number }).version);
    return true;
  }

  async listIds(after: string | undefined, limit: number): Promise<string[]> {
    return (this.stmts.list.all(after ?? '', limit) as { id: string }[]).map((r) => r.id);
  }

  async claimDeliveries(now: number, leaseMs: number, limit: number): Promise<Delivery[]> {
    return this.local(() =>
      this.transaction(() => (this.stmts.claim.all(now + leaseMs, now, now, now, limit) as unknown as OutboxRow[]).map(toDelivery)),
    );
  }

  async completeDelivery<T>(
    delivery: Delivery,
    decide: (current: StoredEndpoint | undefined, stillQueued: boolean) => Decision<T>,
  ): Promise<T> {
    return this.local(() => {
      const outcome = this.transaction(() => {
        const stillQueued = this.stmts.dequeue.run(delivery.id).changes === 1;
        return this.decideAndWrite(delivery.endpointId, (current) => decide(current, stillQueued));
      });
      return this.committed(delivery.endpointId, outcome);
    });
  }

  async retryDelivery(id: number, nextAttemptAt: number): Promise<void> {
    await this.local(() => this.stmts.retry.run(nextAttemptAt, id));
  }

  async dropDelivery(id: number): Promise<void> {
    await this.local(() => this.stmts.dequeue.run(id));
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

  async eventsSince(id: string, afterVersion: number, limit: number): Promise<EndpointEvent[]> {
    const rows = this.stmts.eventsSince.all(id, afterVersion, this.clock() - this.window.maxAgeMs, limit) as unknown as {
      version: number;
      record: string;
    }[];
    return rows.map((r) => ({ version: r.version, record: JSON.parse(r.record) as EndpointRecord }));
  }

  /** In batches, one per flush: node:sqlite blocks the event loop while a statement runs. */
  async pruneEvents(): Promise<number> {
    const before = this.clock() - this.window.maxAgeMs;
    let total = 0;
    while (this.db.isOpen) {
      const deleted = await this.local(() => Number(this.stmts.pruneEvents.run(before, PRUNE_BATCH).changes));
      total += deleted;
      if (deleted < PRUNE_BATCH) break;
    }
    return total;
  }

  async openChangeFeed(): Promise<ChangeFeed> {
    return this.hub.feed();
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  /** Writes already accepted are committed, not dropped; then the writer thread and the file close. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.db.isOpen) {
      this.flush();
      while (this.inFlight.size > 0 || this.queued.length > 0) await new Promise<void>((done) => this.drainWaiters.push(done));
    }
    const writer = this.writer;
    this.writer = undefined;
    await writer?.terminate();
    if (this.db.isOpen) this.db.close();
  }
}

/** The writer thread's part of a decided write: what to write, and the row it was decided on. */
function rowWrite(current: StoredEndpoint, row: StoredEndpoint, write: NonNullable<Decision<unknown>['write']>) {
  return {
    expectVersion: current.version,
    expectToken: current.tokenHash,
    json: row.recordJson,
    seq: row.state.seq,
    pendingSince: row.state.pendingSince,
    deliveries: write.deliveries ?? [],
  };
}

function settle(entry: QueuedLocal): void {
  try {
    entry.resolve(entry.run());
  } catch (error) {
    entry.reject(error);
  }
}
