// The endpoints aggregate on PostgreSQL, for several server instances sharing one database.
//
// `update` first tries without a transaction (compare-and-set): it reads the row, decides, and writes
// in one statement only if the row's version and token digest are still the ones it read (another
// writer or a rotation in between makes it read and decide again). Two round trips instead of four
// (BEGIN, SELECT ... FOR UPDATE, write, COMMIT). After OPTIMISTIC_ATTEMPTS lost races on one endpoint
// it takes the row lock (SELECT ... FOR UPDATE) from the read to the commit, so a hot endpoint still
// makes progress and concurrent writers on any instance never lose each other's changes. The reads
// of one event-loop turn go as one query, and its compare-and-set writes commit together
// (turnBatches.ts).
import type { EndpointRecord, Platform } from '../../domain/record.ts';
import type { ChannelMatch, Decision, Endpoints, StoredEndpoint } from '../endpoints.ts';
import { type ChannelEntry, changedChannelEntries, channelEntries } from '../sql/channelIndex.ts';
import { type PostgresDatabase, prepared } from './database.ts';
import { NOTIFY, type PostgresRowWrites, type Write, channelKey } from './rowWrites.ts';
import { TurnBatches } from './turnBatches.ts';

/** Compare-and-set attempts of `update` before it takes the row lock instead. */
const OPTIMISTIC_ATTEMPTS = 3;

const SQL = {
  create: 'INSERT INTO endpoints (id, token_hash, record) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING',
  // `create` of a record that has channels: its lookup-index rows ($4-$6) in the same statement.
  createIndexed: `WITH created AS (
                    INSERT INTO endpoints (id, token_hash, record) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING RETURNING id
                  ), indexed AS (
                    INSERT INTO channel_index (platform, channel, endpoint_id, bridge)
                    SELECT n.platform, n.channel, created.id, n.bridge FROM created, unnest($4::text[], $5::text[], $6::int[]) AS n (platform, channel, bridge)
                  )
                  SELECT id FROM created`,
  lookup: `SELECT endpoint_id AS endpoint, bridge FROM channel_index WHERE platform = $1 AND channel = $2
           ORDER BY endpoint_id, bridge LIMIT $3`,
  setToken: `WITH u AS (UPDATE endpoints SET token_hash = $2, updated_at = now() WHERE id = $1 RETURNING version)
             SELECT ${NOTIFY('version')} FROM u`,
  // Its events and outbox entries go with it (ON DELETE CASCADE).
  delete: `WITH d AS (DELETE FROM endpoints WHERE id = $1 RETURNING version) SELECT ${NOTIFY('version')} FROM d`,
  list: 'SELECT id FROM endpoints WHERE id > $1 ORDER BY id LIMIT $2',
  countPending: 'SELECT count(*)::int AS n FROM endpoints WHERE pending_since IS NOT NULL',
  expired: 'SELECT id FROM endpoints WHERE pending_since IS NOT NULL AND pending_since < $1 ORDER BY pending_since LIMIT $2',
} as const;

const statement = (key: keyof typeof SQL, values: unknown[]) => prepared(key, SQL[key], values);

export class PostgresEndpoints implements Endpoints {
  private readonly database: PostgresDatabase;
  private readonly writes: PostgresRowWrites;
  /** The reads and writes of each event-loop turn, sent together. */
  private readonly batches: TurnBatches;

  constructor(database: PostgresDatabase, writes: PostgresRowWrites) {
    this.database = database;
    this.writes = writes;
    this.batches = new TurnBatches({
      pool: database.pool,
      transaction: (work) => database.transaction(work),
      readOne: (id) => writes.read(id),
      writeOne: (db, w) => writes.write(db, w.id, w.current, w.write),
      applyMessages: (client, w) => writes.messages.apply(client, w.id, w.write.messages!),
      clock: database.clock,
      maxEvents: database.eventWindow.maxEvents,
    });
  }

  async get(id: string): Promise<StoredEndpoint | undefined> {
    return this.batches.read(id);
  }

  async update<T>(id: string, decide: (current: StoredEndpoint | undefined) => Decision<T>): Promise<T> {
    for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
      const current = await this.get(id);
      const { write, result } = decide(current);
      if (!write || !current) return result;
      // A write that changes the lookup index or drops deliveries is a configuration change, rare, and
      // an edit or delete of a message is rarer than messages: they go on their own, and the turn's
      // batched writes (messages, marks, reads) stay as lean.
      const entries = changedChannelEntries(current.recordJson, write.record);
      const copyChange = write.event !== undefined || (write.deliveries ?? []).some((d) => d.number !== undefined);
      const alone = entries !== undefined || (write.dropDeliveriesTo?.length ?? 0) > 0 || copyChange;
      if (await (alone ? this.writeAlone(id, current, write, entries) : this.batches.write({ id, current, write }))) return result;
    }
    return this.database.transaction(async (client) => this.writes.decideLocked(client, id, await this.writes.lock(client, id), decide));
  }

  /** One write as a statement of its own; with message-log writes, in one transaction with them. */
  private async writeAlone(id: string, current: StoredEndpoint, write: Write, entries: ChannelEntry[] | undefined): Promise<boolean> {
    const messages = write.messages;
    if (!messages) return this.writes.write(this.database.pool, id, current, write, entries);
    return this.database.transaction(async (client) => {
      if (!(await this.writes.write(client, id, current, write, entries))) return false;
      await this.writes.messages.apply(client, id, messages);
      return true;
    });
  }

  async create(id: string, tokenHash: Uint8Array, record: EndpointRecord): Promise<boolean> {
    const entries = channelEntries(record);
    const { pool } = this.database;
    if (entries.length === 0) return (await pool.query(statement('create', [id, tokenHash, JSON.stringify(record)]))).rowCount === 1;
    const values = [
      id,
      tokenHash,
      JSON.stringify(record),
      entries.map((e) => e.platform),
      entries.map((e) => channelKey(e.channel)),
      entries.map((e) => e.bridge),
    ];
    return (await pool.query(statement('createIndexed', values))).rowCount === 1;
  }

  /** Streams authenticated with the old token hear of it (the notification) and end. */
  async setTokenHash(id: string, tokenHash: Uint8Array): Promise<boolean> {
    return (await this.database.pool.query(statement('setToken', [id, tokenHash]))).rowCount === 1;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.database.pool.query(statement('delete', [id]))).rowCount === 1;
  }

  async listIds(after: string | undefined, limit: number): Promise<string[]> {
    return (await this.database.pool.query<{ id: string }>(statement('list', [after ?? '', limit]))).rows.map((r) => r.id);
  }

  async lookupChannel(platform: Platform, channel: string, limit: number): Promise<ChannelMatch[]> {
    const { rows } = await this.database.pool.query<ChannelMatch>(statement('lookup', [platform, channelKey(channel), limit]));
    return rows.map((r) => ({ endpoint: r.endpoint, bridge: r.bridge }));
  }

  async countPending(): Promise<number> {
    return (await this.database.pool.query<{ n: number }>(SQL.countPending)).rows[0]!.n;
  }

  async listExpired(pendingBefore: number, limit: number): Promise<string[]> {
    return (await this.database.pool.query<{ id: string }>(statement('expired', [pendingBefore, limit]))).rows.map((r) => r.id);
  }
}
