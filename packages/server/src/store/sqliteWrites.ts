// What commits one decided write of an endpoint row in SQLite, shared by the adapter's two writers:
// the writer thread (sqliteWriter.ts) and the inline path on the main thread (sqlite.ts). Both
// open their connection here, so they agree on every pragma.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { DeliveryDraft } from './port.ts';

/**
 * WAL with synchronous=FULL: a commit is on disk before it is acknowledged (a power cut included).
 * busy_timeout: another process (the CLI) may hold the write lock for a moment.
 */
export function openConnection(path: string): DatabaseSync {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;');
  return db;
}

/** A decided write of one endpoint row, and the row it was decided on. */
export interface RowWrite {
  /** The version and token digest of the row `decide` saw: the write applies only if both still hold. */
  expectVersion: number;
  expectToken: Uint8Array;
  /** The new record, serialised. */
  json: string;
  seq: number;
  pendingSince: number | null;
  /** Deliveries of message `seq`, queued with the write. */
  deliveries: DeliveryDraft[];
}

/** Prepared once per connection. */
export class RowWriteStatements {
  private readonly write: StatementSync;
  private readonly logEvent: StatementSync;
  private readonly pruneEndpointEvents: StatementSync;
  private readonly dropStale: StatementSync;
  private readonly enqueue: StatementSync;
  private readonly readClock: StatementSync;
  private readonly maxEvents: number;

  constructor(db: DatabaseSync, maxEvents: number) {
    this.maxEvents = maxEvents;
    this.write = db.prepare(
      `UPDATE endpoints SET record = ?, message_seq = ?, pending_since = ?, version = version + 1,
         updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')
       WHERE id = ? AND version = ? AND token_hash = ? RETURNING version`,
    );
    this.logEvent = db.prepare('INSERT INTO endpoint_events (endpoint_id, version, record, created_at) VALUES (?, ?, ?, ?)');
    // Beyond the window, counted from the version just written: usually one row, a range of the
    // primary key. (Adding "OR created_at < ?" read every event row of the endpoint, 300 us per
    // update; events past the age limit are never returned and the sweep deletes them.)
    this.pruneEndpointEvents = db.prepare('DELETE FROM endpoint_events WHERE endpoint_id = ? AND version <= ?');
    // Entries of other messages (or all, when idle: the seq argument is then NULL).
    this.dropStale = db.prepare('DELETE FROM outbox WHERE endpoint_id = ? AND (? IS NULL OR message_seq <> ?)');
    this.enqueue = db.prepare(
      `INSERT INTO outbox (endpoint_id, message_seq, platform, url, payload, next_attempt_at, expires_at)
       VALUES (?, ?, ?, ?, ?, 0, ?) ON CONFLICT DO NOTHING`,
    );
    this.readClock = db.prepare('SELECT n FROM commit_clock');
  }

  /**
   * Inside the caller's transaction: the row (its version + 1), the event of that version, the pruned
   * log and the outbox. Returns the new version, or undefined when the row is gone or is no longer
   * the one decided on (another writer committed since): then nothing was written.
   */
  apply(id: string, w: RowWrite, now: number): number | undefined {
    const written = this.write.get(w.json, w.seq, w.pendingSince, id, w.expectVersion, w.expectToken) as { version: number } | undefined;
    if (!written) return undefined;
    this.logEvent.run(id, written.version, w.json, now);
    this.pruneEndpointEvents.run(id, written.version - this.maxEvents);
    const pendingSeq = w.pendingSince === null ? null : w.seq;
    this.dropStale.run(id, pendingSeq, pendingSeq);
    for (const d of w.deliveries) this.enqueue.run(id, w.seq, d.platform, d.url, d.payload, d.expiresAt);
    return written.version;
  }

  /** The commit clock: moves with every change of an endpoint row, by any connection (triggers). */
  clock(): number {
    return (this.readClock.get() as { n: number }).n;
  }
}
