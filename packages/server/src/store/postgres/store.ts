// The PostgreSQL store, for several server instances sharing one database: its aggregates over one
// pool (database.ts), with the same semantics as the SQLite store. The rate-limit counters live in
// the database too, so a limit holds across instances.
import type { EndpointStore } from '../port.ts';
import { PostgresBots } from './bots.ts';
import { PostgresChanges } from './changes.ts';
import { PostgresCounters } from './counters.ts';
import { PostgresDatabase, type PostgresStoreOptions } from './database.ts';
import { PostgresDeliveries } from './deliveries.ts';
import { PostgresEndpoints } from './endpoints.ts';
import { PostgresMessageLog } from './messageLog.ts';
import { PostgresRowWrites } from './rowWrites.ts';
import { PostgresSnapshot } from './snapshot.ts';

export { type PostgresStoreOptions, loadMigrations, migrate } from './database.ts';

export class PostgresEndpointStore implements EndpointStore {
  readonly inProcess = false;
  readonly endpoints: PostgresEndpoints;
  readonly bots: PostgresBots;
  readonly messages: PostgresMessageLog;
  readonly deliveries: PostgresDeliveries;
  readonly changes: PostgresChanges;
  readonly snapshot: PostgresSnapshot;
  readonly counters: PostgresCounters;
  private readonly database: PostgresDatabase;

  /** Opens the pool and brings the schema up to date; rejects (pool closed) when either fails. */
  static async open(options: PostgresStoreOptions): Promise<PostgresEndpointStore> {
    const store = new PostgresEndpointStore(options);
    try {
      await store.database.migrate();
      await store.database.checkAutovacuum();
      return store;
    } catch (error) {
      await store.close();
      throw error;
    }
  }

  private constructor(options: PostgresStoreOptions) {
    this.database = new PostgresDatabase(options);
    this.messages = new PostgresMessageLog(this.database.pool, this.database.clock);
    const writes = new PostgresRowWrites(this.database, this.messages);
    this.endpoints = new PostgresEndpoints(this.database, writes);
    this.bots = new PostgresBots(this.database);
    this.deliveries = new PostgresDeliveries(this.database, writes);
    this.changes = new PostgresChanges(this.database);
    this.snapshot = new PostgresSnapshot(this.database, this.bots);
    this.counters = new PostgresCounters(this.database.pool);
  }

  async ping(): Promise<void> {
    await this.database.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    this.counters.close();
    await this.database.close();
  }
}
