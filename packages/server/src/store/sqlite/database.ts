// The SQLite store's query runner, shared by its aggregates: one file through node:sqlite (no native
// build), in WAL mode with synchronous=FULL, so a write is on disk before it is acknowledged.
// node:sqlite is synchronous, so a transaction never interleaves with another request in this process;
// BEGIN IMMEDIATE serialises writers across processes (the CLI may run beside the server).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { ChangeHub } from '../changeFeed.ts';
import { type ChangeLogWindow, DEFAULT_CHANGE_WINDOW, DEFAULT_EVENT_WINDOW, type EventLogWindow } from '../changes.ts';
import { loadMigrations, pendingMigrations } from '../migrations.ts';
import { RowCache } from './rowCache.ts';

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

/** The SQLite schema's migrations (sqlite/migrations/), read from the files shipped with the code. */
export const sqliteMigrations = () => loadMigrations(new URL('./migrations/', import.meta.url));

/** SQLITE_BUSY: another connection holds the lock this statement needs (past busy_timeout). */
export function isLockedByOther(error: unknown): boolean {
  const e = error as { errcode?: unknown; message?: unknown } | null;
  return typeof e?.errcode === 'number' ? (e.errcode & 0xff) === 5 : typeof e?.message === 'string' && /database is locked/.test(e.message);
}

export class SqliteDatabase {
  readonly db: DatabaseSync;
  readonly clock: () => number;
  readonly eventWindow: EventLogWindow;
  readonly changeWindow: ChangeLogWindow;
  /** Committed rows kept in memory: a read of a cached row costs no SQLite call (see rowCache.ts). */
  readonly cache: RowCache;
  /** This process's commits, told to its change feeds. */
  readonly hub = new ChangeHub();
  /** Transaction control as prepared statements: exec() would compile them on every update. */
  private readonly tx: Record<'begin' | 'commit' | 'savepoint' | 'release' | 'rollbackTo', StatementSync>;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.eventWindow = { ...DEFAULT_EVENT_WINDOW, ...options.eventWindow };
    this.changeWindow = { ...DEFAULT_CHANGE_WINDOW, ...options.changeWindow };
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new DatabaseSync(path);
    const busyTimeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000));
    this.db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = ${busyTimeoutMs}; PRAGMA foreign_keys = ON;`);
    this.tx = {
      begin: this.prepare('BEGIN IMMEDIATE'),
      commit: this.prepare('COMMIT'),
      savepoint: this.prepare('SAVEPOINT item'),
      release: this.prepare('RELEASE item'),
      rollbackTo: this.prepare('ROLLBACK TO item'),
    };
    this.cache = new RowCache(this.prepare('PRAGMA data_version'), options.cachedRows ?? DEFAULT_CACHED_ROWS);
    this.migrate();
  }

  prepare(sql: string): StatementSync {
    return this.db.prepare(sql);
  }

  get isOpen(): boolean {
    return this.db.isOpen;
  }

  /** Runs the migrations this file has not seen; `PRAGMA user_version` counts those that ran. */
  private migrate(): void {
    const migrations = sqliteMigrations();
    const { user_version: done } = this.db.prepare('PRAGMA user_version').get() as { user_version: number };
    if (done > migrations.length) {
      // A newer release has migrated this file further: refuse, naming both versions, rather than fail
      // later on a statement this release's schema expects.
      this.db.close();
      throw new Error(`the SQLite file has schema version ${done}, newer than this release's ${migrations.length}: run the newer release`);
    }
    for (const m of pendingMigrations(migrations, (version) => version <= done)) {
      this.transaction(() => {
        this.db.exec(m.sql);
        this.db.exec(`PRAGMA user_version = ${m.version}`);
      });
    }
  }

  /** BEGIN IMMEDIATE, then the cache drops what another process may have committed since its last check. */
  begin(): void {
    this.tx.begin.run();
    this.cache.revalidate();
  }

  commit(): void {
    this.tx.commit.run();
  }

  transaction<T>(work: () => T): T {
    this.begin();
    try {
      const result = work();
      this.commit();
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
  rollback(): void {
    if (this.db.isTransaction) this.db.exec('ROLLBACK');
  }

  /**
   * Runs `work` inside the open transaction so that, if it throws, only its own changes are undone.
   * Some failures (a full disk, an I/O error) make SQLite roll the whole transaction back: no
   * savepoint is left to return to, and the error is thrown on (an outage: 503).
   */
  savepoint<T>(work: () => T): { ok: true; value: T } | { ok: false; error: unknown } {
    this.tx.savepoint.run();
    try {
      const value = work();
      this.tx.release.run();
      return { ok: true, value };
    } catch (error) {
      if (!this.db.isTransaction) throw error;
      this.tx.rollbackTo.run();
      this.tx.release.run();
      return { ok: false, error };
    }
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }
}
