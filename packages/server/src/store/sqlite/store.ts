// The embedded store: one SQLite file, its aggregates over one shared connection (database.ts).
// Rate-limit counters live in this process's memory: one server serves a file.
import { memoryCounters } from '../memoryCounters.ts';
import type { EndpointStore, GroupCommitTiming } from '../port.ts';
import { SqliteBots } from './bots.ts';
import { SqliteChanges } from './changes.ts';
import { SqliteDatabase, type SqliteStoreOptions } from './database.ts';
import { SqliteDeliveries } from './deliveries.ts';
import { SqliteEndpoints } from './endpoints.ts';
import { GroupCommit } from './groupCommit.ts';
import { SqliteMessageLog } from './messageLog.ts';
import { RowWrites } from './rowWrites.ts';
import { SqliteSnapshot } from './snapshot.ts';

export { type SqliteStoreOptions, sqliteMigrations } from './database.ts';

export class SqliteEndpointStore implements EndpointStore {
  readonly inProcess = true;
  readonly endpoints: SqliteEndpoints;
  readonly bots: SqliteBots;
  readonly messages: SqliteMessageLog;
  readonly deliveries: SqliteDeliveries;
  readonly changes: SqliteChanges;
  readonly snapshot: SqliteSnapshot;
  readonly counters = memoryCounters;
  private readonly database: SqliteDatabase;
  private readonly groupCommit: GroupCommit;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.database = new SqliteDatabase(path, options);
    this.messages = new SqliteMessageLog(this.database.db, this.database.clock);
    const writes = new RowWrites(this.database, this.messages);
    this.groupCommit = new GroupCommit(this.database, writes, options.lockWaitMs ?? 5000);
    this.endpoints = new SqliteEndpoints(this.database, writes, this.groupCommit);
    this.bots = new SqliteBots(this.database);
    this.deliveries = new SqliteDeliveries(this.database, writes, this.groupCommit);
    this.changes = new SqliteChanges(this.database, writes, options.othersCheckMs ?? 250);
    this.snapshot = new SqliteSnapshot(this.database, this.bots);
  }

  observeGroupCommits(listener: (commit: GroupCommitTiming) => void): void {
    this.groupCommit.observe(listener);
  }

  async ping(): Promise<void> {
    this.database.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    this.changes.close();
    this.groupCommit.commit(); // updates already accepted are committed, not dropped
    this.database.close();
  }
}
