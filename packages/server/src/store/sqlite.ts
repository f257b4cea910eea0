// The embedded store: one SQLite file through node:sqlite (no native build). WAL mode with
// synchronous=FULL, so a write is on disk before it is acknowledged. node:sqlite is synchronous, so a
// transaction never interleaves with another request in this process; BEGIN IMMEDIATE serialises
// writers across processes (the CLI may run beside the server).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { EndpointRecord, Platform } from '../domain/record.ts';
import type { Decision, Delivery, EndpointStore, MessageState, StoredEndpoint } from './port.ts';

// Ordered and append-only: an existing file runs the ones it has not seen (PRAGMA user_version).
const MIGRATIONS = [
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
];

interface EndpointRow {
  token_hash: Uint8Array;
  record: string;
  message_seq: number;
  pending_since: number | null;
}

interface OutboxRow {
  id: number;
  endpoint_id: string;
  message_seq: number;
  platform: string;
  url: string;
  payload: string;
  attempts: number;
  expires_at: number;
}

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
  | 'dequeue'
  | 'retry'
  | 'count'
  | 'countPending'
  | 'expired';

const toDelivery = (r: OutboxRow): Delivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  seq: r.message_seq,
  platform: r.platform as Platform,
  url: r.url,
  payload: r.payload,
  attempts: r.attempts,
  expiresAt: r.expires_at,
});

export class SqliteEndpointStore implements EndpointStore {
  readonly kind = 'sqlite';
  private readonly db: DatabaseSync;
  private readonly stmts: Record<StatementName, StatementSync>;

  constructor(path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new DatabaseSync(path);
    this.db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;');
    this.migrate();
    const q = (sql: string) => this.db.prepare(sql);
    this.stmts = {
      get: q('SELECT token_hash, record, message_seq, pending_since FROM endpoints WHERE id = ?'),
      write: q(
        `UPDATE endpoints SET record = ?, message_seq = ?, pending_since = ?,
           updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?`,
      ),
      create: q('INSERT INTO endpoints (id, token_hash, record) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING'),
      setToken: q('UPDATE endpoints SET token_hash = ? WHERE id = ?'),
      delete: q('DELETE FROM endpoints WHERE id = ?'),
      list: q('SELECT id FROM endpoints WHERE id > ? ORDER BY id LIMIT ?'),
      // Entries of other messages (or all, when idle: the seq argument is then NULL).
      dropStale: q('DELETE FROM outbox WHERE endpoint_id = ? AND (? IS NULL OR message_seq <> ?)'),
      enqueue: q(
        `INSERT INTO outbox (endpoint_id, message_seq, platform, url, payload, next_attempt_at, expires_at)
         VALUES (?, ?, ?, ?, ?, 0, ?) ON CONFLICT DO NOTHING`,
      ),
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
    };
  }

  private migrate(): void {
    const { user_version: done } = this.db.prepare('PRAGMA user_version').get() as { user_version: number };
    for (let v = done; v < MIGRATIONS.length; v++) {
      this.transaction(() => {
        this.db.exec(MIGRATIONS[v]!);
        this.db.exec(`PRAGMA user_version = ${v + 1}`);
      });
    }
  }

  private transaction<T>(work: () => T): T {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    }
  }

  private read(id: string): StoredEndpoint | undefined {
    const row = this.stmts.get.get(id) as EndpointRow | undefined;
    if (!row) return undefined;
    const state: MessageState = { seq: row.message_seq, pendingSince: row.pending_since };
    return { tokenHash: row.token_hash, record: JSON.parse(row.record) as EndpointRecord, state };
  }

  private commit<T>(id: string, { write, result }: Decision<T>): T {
    if (!write) return result;
    const { record, state, deliveries = [] } = write;
    this.stmts.write.run(JSON.stringify(record), state.seq, state.pendingSince, id);
    const pendingSeq = state.pendingSince === null ? null : state.seq;
    this.stmts.dropStale.run(id, pendingSeq, pendingSeq);
    for (const d of deliveries) this.stmts.enqueue.run(id, state.seq, d.platform, d.url, d.payload, d.expiresAt);
    return result;
  }

  async get(id: string): Promise<StoredEndpoint | undefined> {
    return this.read(id);
  }

  async update<T>(id: string, decide: (current: StoredEndpoint | undefined) => Decision<T>): Promise<T> {
    return this.transaction(() => this.commit(id, decide(this.read(id))));
  }

  async create(id: string, tokenHash: Uint8Array, record: EndpointRecord): Promise<boolean> {
    return this.stmts.create.run(id, tokenHash, JSON.stringify(record)).changes === 1;
  }

  async setTokenHash(id: string, tokenHash: Uint8Array): Promise<boolean> {
    return this.stmts.setToken.run(tokenHash, id).changes === 1;
  }

  async delete(id: string): Promise<boolean> {
    return this.stmts.delete.run(id).changes === 1;
  }

  async listIds(after: string | undefined, limit: number): Promise<string[]> {
    return (this.stmts.list.all(after ?? '', limit) as { id: string }[]).map((r) => r.id);
  }

  async claimDeliveries(now: number, leaseMs: number, limit: number): Promise<Delivery[]> {
    return this.transaction(() => (this.stmts.claim.all(now + leaseMs, now, now, now, limit) as unknown as OutboxRow[]).map(toDelivery));
  }

  async completeDelivery<T>(
    delivery: Delivery,
    decide: (current: StoredEndpoint | undefined, stillQueued: boolean) => Decision<T>,
  ): Promise<T> {
    return this.transaction(() => {
      const stillQueued = this.stmts.dequeue.run(delivery.id).changes === 1;
      return this.commit(delivery.endpointId, decide(this.read(delivery.endpointId), stillQueued));
    });
  }

  async retryDelivery(id: number, nextAttemptAt: number): Promise<void> {
    this.stmts.retry.run(nextAttemptAt, id);
  }

  async dropDelivery(id: number): Promise<void> {
    this.stmts.dequeue.run(id);
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

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
  }
}
