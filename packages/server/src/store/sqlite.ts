// The embedded store: one SQLite file through node:sqlite (no native build). WAL mode with
// synchronous=FULL, so a write is on disk before it is acknowledged. node:sqlite is synchronous, so a
// transaction never interleaves with another request in this process; BEGIN IMMEDIATE serialises
// writers across processes (the CLI may run beside the server).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { EndpointRecord } from '../domain/record.ts';
import type { Decision, EndpointStore, StoredEndpoint } from './port.ts';

const MIGRATIONS = [
  `CREATE TABLE endpoints (
     id TEXT PRIMARY KEY,
     token_hash BLOB NOT NULL,
     record TEXT NOT NULL,
     created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
     updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
   ) STRICT`,
];

interface Row {
  token_hash: Uint8Array;
  record: string;
}

export class SqliteEndpointStore implements EndpointStore {
  readonly kind = 'sqlite';
  private readonly db: DatabaseSync;
  private readonly stmts: Record<'get' | 'write' | 'create' | 'setToken' | 'delete' | 'list', StatementSync>;

  constructor(path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new DatabaseSync(path);
    this.db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;');
    this.migrate();
    this.stmts = {
      get: this.db.prepare('SELECT token_hash, record FROM endpoints WHERE id = ?'),
      write: this.db.prepare(
        `UPDATE endpoints SET record = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?`,
      ),
      create: this.db.prepare('INSERT INTO endpoints (id, token_hash, record) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING'),
      setToken: this.db.prepare('UPDATE endpoints SET token_hash = ? WHERE id = ?'),
      delete: this.db.prepare('DELETE FROM endpoints WHERE id = ?'),
      list: this.db.prepare('SELECT id FROM endpoints WHERE id > ? ORDER BY id LIMIT ?'),
    };
  }

  /** Applies the migrations this file has not seen yet, tracked in PRAGMA user_version. */
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
    const row = this.stmts.get.get(id) as Row | undefined;
    return row && { tokenHash: row.token_hash, record: JSON.parse(row.record) as EndpointRecord };
  }

  async get(id: string): Promise<StoredEndpoint | undefined> {
    return this.read(id);
  }

  async update<T>(id: string, decide: (current: StoredEndpoint | undefined) => Decision<T>): Promise<T> {
    return this.transaction(() => {
      const { write, result } = decide(this.read(id));
      if (write) this.stmts.write.run(JSON.stringify(write), id);
      return result;
    });
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

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.isOpen) this.db.close();
  }
}
