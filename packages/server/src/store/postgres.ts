// The PostgreSQL store, for several server instances sharing one database. Same semantics as the
// SQLite store: `completeDelivery` (and `update` when it falls back, below) holds the endpoint's row
// lock (SELECT ... FOR UPDATE) from the read to the commit, so concurrent writers on any instance
// never lose each other's changes; outbox claims use FOR UPDATE SKIP LOCKED, so instances drain the
// queue together without handing one entry to two workers.
//
// `update` first tries without a transaction (compare-and-set): it reads the row, decides, and writes
// in one statement only if the row's version and token digest are still the ones it read (another
// writer or a rotation in between makes it read and decide again). Two round trips instead of four
// (BEGIN, SELECT ... FOR UPDATE, write, COMMIT). After OPTIMISTIC_ATTEMPTS lost races on one endpoint it
// takes the row lock as above, so a hot endpoint still makes progress. The reads of one event-loop
// turn go as one query, and its compare-and-set writes commit together in one transaction (one
// statement over arrays per round; a batch of one round is that statement alone, with no BEGIN and
// COMMIT): postgresTurnBatches.ts.
//
// Lock order is always endpoint row, then its outbox rows and event-log rows (update, completeDelivery
// and the cascade of delete all follow it; a batch of writes locks its endpoint rows in ID order first; claim/retry/drop touch one outbox statement and hold
// nothing else; the event-log sweep skips rows it would have to wait for), so transactions cannot
// deadlock each other.
//
// Every failure (database down, pool exhausted, statement timeout) rejects the returned promise;
// the timeouts below bound how long any call can wait.
//
// Change stream: a write also bumps the row's version, appends the record to endpoint_events and
// prunes that endpoint's log, in the same statement, and calls pg_notify (delivered on commit) so
// every instance's PostgresChangeFeed hears of it. Rotations and deletions notify too.
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { TurnBatches } from './postgresTurnBatches.ts';
import { queueJson } from '../domain/messageQueue.ts';
import { PostgresMessageLog } from './postgres/messageLog.ts';
import { type EndpointRow, type EventRow, LoggedEvent, type OutboxRow, claimLanes, toDelivery, toStored } from './rows.ts';
import type { EndpointRecord, Platform } from '../domain/record.ts';
import type { ChangeFeed } from './changeFeed.ts';
import { CHANGES_CHANNEL, PostgresChangeFeed } from './postgresChangeFeed.ts';
import {
  DEFAULT_CHANGE_WINDOW,
  DEFAULT_EVENT_WINDOW,
  type ChangeEntry,
  type ChangeLogWindow,
  type ChangeRead,
  missedChanges,
  type Decision,
  type Delivery,
  type EndpointEvent,
  type EndpointStore,
  type EventLogWindow,
  type StoredBot,
  type StoredEndpoint,
  type EndpointSnapshot,
  type ImportOutcome,
  SNAPSHOT_PAGE_ROWS,
} from './port.ts';
import { type SnapshotRow, batchesOf, snapshotColumns, toSnapshot } from './snapshotRows.ts';
import { planBotImport } from './botImport.ts';
import { type ChannelEntry, type ChannelMatch, changedChannelEntries, channelEntries } from './channelIndex.ts';

export interface PostgresStoreOptions {
  /** libpq-style URL: postgres://user:password@host:5432/database?sslmode=... */
  connectionString: string;
  /** Connections per instance (default 10). Several instances share the server's max_connections. */
  poolSize?: number;
  /** Opening a new connection fails after this (default 2000 ms). */
  connectionTimeoutMs?: number;
  /** Waiting for a free connection while the whole pool is busy fails after this (default 10 s). */
  acquireTimeoutMs?: number;
  /** Server-side limit for one statement, lock waits included (default 5000 ms). */
  statementTimeoutMs?: number;
  /** Idle pooled connections are closed after this (default 30 s). */
  idleTimeoutMs?: number;
  /** Errors of idle pooled connections (the server restarted, the network dropped); ignored by default. */
  onIdleError?: (err: Error) => void;
  /** Told of a database setting that will hurt in the long run (autovacuum off), once, at open. */
  onWarning?: (message: string) => void;
  /** Epoch milliseconds, for the event log's timestamps and age limit (default Date.now). */
  clock?: () => number;
  /** Replay window of the event log (default: the last 100 events, none older than 10 minutes). */
  eventWindow?: Partial<EventLogWindow>;
  /** Window of the service-wide change log (default: the newest 100,000 changes, none older than 10 minutes). */
  changeWindow?: Partial<ChangeLogWindow>;
}

/** One SQL file of `migrations/postgres/`, applied at most once per database. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const MIGRATIONS_DIR = new URL('./migrations/postgres/', import.meta.url);
const MIGRATION_FILE = /^(\d+)_([a-z0-9_]+)\.sql$/;
/** Migrations may legitimately take longer than a request; they still must not hang forever. */
const MIGRATION_STATEMENT_TIMEOUT_MS = 60_000;

/** Reads `NNNN_name.sql` files in version order; versions must run 1, 2, 3 ... without gaps. */
export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((file) => {
      const m = MIGRATION_FILE.exec(file);
      if (!m) throw new Error(`migration file ${file}: expected NNNN_name.sql`);
      return { version: Number(m[1]), name: m[2]!, sql: readFileSync(new URL(file, dir), 'utf8') };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration versions must be 1..n without gaps; found ${m.version} at position ${i + 1}`);
  });
  return migrations;
}

/**
 * Applies the migrations this database has not recorded in `schema_migrations`, all in one
 * transaction, and returns the versions it applied. Instances starting together serialise on a
 * transaction-level advisory lock: the first applies, the others then find everything recorded.
 * A small runner instead of a migration tool: no extra dependency, the schema is two tables, and
 * PostgreSQL's transactional DDL makes a failed run leave nothing behind. (So a migration must be
 * transactional: no CREATE INDEX CONCURRENTLY.) Versions recorded but unknown to this code (a
 * newer release already migrated) are left alone, so migrations must stay backward compatible for
 * rolling deploys.
 */
export async function migrate(client: pg.ClientBase, migrations: Migration[] = loadMigrations()): Promise<number[]> {
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL statement_timeout = ${MIGRATION_STATEMENT_TIMEOUT_MS}`);
    // The lock key is derived from a name so it does not collide with other applications' keys.
    await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('chatbridge:schema_migrations', 0))`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version integer PRIMARY KEY,
         name text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const done = new Set(rows.map((r) => r.version));
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

// bigint (int8) columns hold epoch milliseconds, sequence numbers and outbox IDs. pg returns them as
// strings by default; this pool parses them to numbers, and refuses values a number cannot hold
// exactly rather than rounding them. Scoped to this pool: the global pg.types stay untouched.
const INT8_OID = 20;
const parseInt8 = (text: string): number => {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`bigint ${text} is outside the exact range of a JavaScript number`);
  return n;
};
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** The sweep of old events deletes at most this many rows per statement, and this many statements per call. */
const PRUNE_BATCH = 5000;
const PRUNE_MAX_BATCHES = 20;

/**
 * A channel ID as the lookup index keeps it: its JSON string literal, as JSON.stringify writes it into
 * the record (a text column cannot hold NUL, which a channel ID may). `json` (not `jsonb`) values keep
 * their text verbatim, so the migration and imports derive the same key from a stored record.
 */
const channelKey = (channel: string) => JSON.stringify(channel);

/** `<endpointId>:<version>` on the changes channel, sent when the statement's transaction commits. */
const NOTIFY = (versionColumn: string) => `pg_notify('${CHANGES_CHANNEL}', $1::text || ':' || ${versionColumn}::text)`;

/** Compare-and-set attempts of `update` before it takes the row lock instead. */
const OPTIMISTIC_ATTEMPTS = 3;

const SQL = {
  get: 'SELECT token_hash, record, message_seq, pending_since, version, queue FROM endpoints WHERE id = $1',
  lock: 'SELECT token_hash, record, message_seq, pending_since, version, queue FROM endpoints WHERE id = $1 FOR UPDATE',
  // The row (version + 1) with its queue summary $20, only if it still has version $8 and token
  // digest $9, and in the same statement: the outbox entries no message waits for: all of them when
  // nothing is unread ($5 NULL), and those to the webhooks
  // ($18 platforms, $19 URLs) the decision dropped; when $14, the lookup index's rows of the endpoint
  // become the rows $15-$17 (those not among them are deleted; the new ones are added, the others
  // stand, so no statement both deletes and inserts one key); the event of the new version (at
  // $6, epoch ms); the endpoint's events beyond the window of $7 events, a range of the primary key
  // (events past the age limit are never returned, and the sweep deletes them); the new deliveries
  // ($10-$13, one array per column); and the notification. Every sub-statement depends on `written`,
  // so when the row has changed nothing is written at all. The sub-statements share one snapshot, so
  // the prune cannot see (or remove) the event being added. It commits on its own (compare-and-set)
  // or inside a transaction holding the row lock, where its conditions always hold.
  write: `WITH written AS (
            UPDATE endpoints SET record = $2, message_seq = $3, pending_since = $4, version = version + 1, queue = $20, updated_at = now()
            WHERE id = $1 AND version = $8 AND token_hash = $9 RETURNING version
          ), stale AS (
            DELETE FROM outbox
            WHERE endpoint_id = $1 AND EXISTS (SELECT 1 FROM written)
              AND ($5::bigint IS NULL OR (platform, url) IN (SELECT * FROM unnest($18::text[], $19::text[])))
          ), unindexed AS (
            DELETE FROM channel_index
            WHERE $14::boolean AND endpoint_id = $1 AND EXISTS (SELECT 1 FROM written)
              AND (platform, channel, bridge) NOT IN (SELECT * FROM unnest($15::text[], $16::text[], $17::int[]))
          ), indexed AS (
            INSERT INTO channel_index (platform, channel, endpoint_id, bridge)
            SELECT n.platform, n.channel, $1, n.bridge FROM written, unnest($15::text[], $16::text[], $17::int[]) AS n (platform, channel, bridge)
            WHERE $14::boolean
            ON CONFLICT DO NOTHING
          ), logged AS (
            INSERT INTO endpoint_events (endpoint_id, version, record, created_at, message_number) SELECT $1, version, $2, $6::bigint, $5::bigint FROM written
          ), pruned AS (
            DELETE FROM endpoint_events WHERE endpoint_id = $1 AND version <= (SELECT version FROM written) - $7::bigint
          ), queued AS (
            INSERT INTO outbox (endpoint_id, message_seq, platform, url, payload, next_attempt_at, expires_at)
            SELECT $1, $3, d.platform, d.url, d.payload, 0, d.expires_at
            FROM written, unnest($10::text[], $11::text[], $12::text[], $13::bigint[]) AS d (platform, url, payload, expires_at)
            ON CONFLICT DO NOTHING
          )
          SELECT version, ${NOTIFY('version')} FROM written`,
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
  // SKIP LOCKED: an entry another instance is claiming right now is passed over, not waited for;
  // one it has just claimed fails the lease condition when rechecked.
  // Only the oldest entry of each webhook (its head, migration 0008) is due: a webhook's messages go
  // out one at a time, in order, on any instance (a head another instance holds stays the head until
  // it is acknowledged). An expired head is removed by the expiry pass that runs before each claim.
  claim: `UPDATE outbox SET lease_until = $1, attempts = attempts + 1
          WHERE id IN (SELECT o.id FROM outbox o
                       WHERE o.head AND o.next_attempt_at <= $2 AND o.lease_until <= $2 AND o.expires_at > $2
                         AND ($4::text IS NULL OR o.platform = $4)
                         AND NOT (o.endpoint_id = ANY ($5::text[]))
                       ORDER BY o.next_attempt_at, o.id LIMIT $3
                       FOR UPDATE SKIP LOCKED)
          RETURNING id, endpoint_id, message_seq, platform, url, payload, attempts, expires_at`,
  dequeue: 'DELETE FROM outbox WHERE id = $1',
  lockOf: 'SELECT 1 FROM endpoints WHERE id = (SELECT endpoint_id FROM outbox WHERE id = $1) FOR UPDATE',
  hold: 'UPDATE outbox SET next_attempt_at = greatest(next_attempt_at, $4) WHERE endpoint_id = $1 AND platform = $2 AND url = $3',
  retry: 'UPDATE outbox SET next_attempt_at = $2, lease_until = 0 WHERE id = $1',
  count: 'SELECT count(*) AS n FROM outbox',
  countPending: 'SELECT count(*)::int AS n FROM endpoints WHERE pending_since IS NOT NULL',
  expired: 'SELECT id FROM endpoints WHERE pending_since IS NOT NULL AND pending_since < $1 ORDER BY pending_since LIMIT $2',
  // The events are sized first (octet_length of a text value reads its stored length, without
  // detoasting it), and only those within $5 bytes together (the first in any case) are read.
  eventsSince: `WITH sized AS (
                  SELECT version, octet_length(record) AS bytes, row_number() OVER w AS n, sum(octet_length(record)) OVER w AS upto
                  FROM endpoint_events WHERE endpoint_id = $1 AND version > $2 AND created_at >= $3
                  WINDOW w AS (ORDER BY version ROWS UNBOUNDED PRECEDING)
                  ORDER BY version LIMIT $4
                )
                SELECT s.version, s.bytes, e.record, e.message_number FROM sized s JOIN endpoint_events e ON e.endpoint_id = $1 AND e.version = s.version
                WHERE s.n = 1 OR s.upto <= $5::bigint ORDER BY s.version`,
  // Entries of the change log after $1 within the age limit ($2), sized as eventsSince sizes events
  // (NULL bytes: the endpoint's log no longer keeps that event), the records of those within $4
  // bytes together (the first in any case) read.
  changesSince: `WITH c AS (
                   SELECT position, endpoint_id, version FROM change_log WHERE position > $1 AND created_at >= $2 ORDER BY position LIMIT $3
                 ), sized AS (
                   SELECT c.position, c.endpoint_id, c.version, octet_length(e.record) AS bytes,
                          row_number() OVER w AS n, sum(coalesce(octet_length(e.record), 0)) OVER w AS upto
                   FROM c LEFT JOIN endpoint_events e ON e.endpoint_id = c.endpoint_id AND e.version = c.version
                   WINDOW w AS (ORDER BY c.position ROWS UNBOUNDED PRECEDING)
                 )
                 SELECT s.position, s.endpoint_id, s.version, s.bytes, e.record, e.message_number, (SELECT max(position) FROM change_log) AS newest
                 FROM sized s LEFT JOIN endpoint_events e ON e.endpoint_id = s.endpoint_id AND e.version = s.version
                 WHERE s.n = 1 OR s.upto <= $4::bigint ORDER BY s.position`,
  newestChange: 'SELECT coalesce(max(position), 0) AS n FROM change_log',
  // Entries are in commit order, so those past the age limit are a prefix.
  firstChange: 'SELECT position AS n FROM change_log WHERE created_at >= $1 ORDER BY position LIMIT 1',
  // A batch of the oldest entries at a time; the newest entry always stays.
  pruneChanges: `DELETE FROM change_log WHERE position IN (
                   SELECT position FROM (SELECT position, created_at FROM change_log ORDER BY position LIMIT $3) x
                   WHERE position < (SELECT max(position) FROM change_log)
                     AND (created_at < $1 OR position <= (SELECT max(position) FROM change_log) - $2))`,
  // The periodic sweep, a batch at a time. SKIP LOCKED: it never waits for a writer (which holds its
  // endpoint's row lock and may be pruning the same events), so it cannot deadlock with one.
  pruneEvents: `DELETE FROM endpoint_events WHERE (endpoint_id, version) IN (
                  SELECT endpoint_id, version FROM endpoint_events WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED
                )`,
} as const;

/**
 * A query of SQL as a named prepared statement: PostgreSQL parses and plans it once per connection
 * instead of on every call, where an update's CPU would otherwise go.
 */
const statement = (key: keyof typeof SQL, values: unknown[]): pg.QueryConfig => ({ name: `chatbridge.${key}`, text: SQL[key], values });

export class PostgresEndpointStore implements EndpointStore {
  readonly kind = 'postgres';
  readonly readsInTurn = false;
  private readonly pool: pg.Pool;
  private readonly options: PostgresStoreOptions;
  private readonly clock: () => number;
  private readonly window: EventLogWindow;
  private readonly changeWindow: ChangeLogWindow;
  /** The reads and writes of each event-loop turn, sent together. */
  private readonly batches: TurnBatches;
  /** The message log: written inside this store's transactions, read through its own port. */
  readonly messages: PostgresMessageLog;
  private closed = false;

  /** Opens the pool and brings the schema up to date; rejects (pool closed) when either fails. */
  static async open(options: PostgresStoreOptions): Promise<PostgresEndpointStore> {
    const store = new PostgresEndpointStore(options);
    try {
      await store.migrate();
      await store.checkAutovacuum();
      return store;
    } catch (error) {
      await store.close();
      throw error;
    }
  }

  private constructor(options: PostgresStoreOptions) {
    this.options = options;
    this.clock = options.clock ?? Date.now;
    this.window = { ...DEFAULT_EVENT_WINDOW, ...options.eventWindow };
    this.changeWindow = { ...DEFAULT_CHANGE_WINDOW, ...options.changeWindow };
    const statementTimeout = options.statementTimeoutMs ?? 5000;
    const connectTimeout = options.connectionTimeoutMs ?? 2000;
    // pg-pool applies one connectionTimeoutMillis both to connecting and to queueing for a busy
    // pool. Queueing needs more room: a burst on one endpoint serialises on its row lock (a commit
    // each, a couple of ms), so hundreds of concurrent updates legitimately queue for a second or
    // more. The pool's value therefore bounds the queue, and each client bounds its own connect.
    class BoundedConnectClient extends pg.Client {
      constructor(config?: pg.ClientConfig) {
        super({ ...config, connectionTimeoutMillis: connectTimeout });
      }
    }
    this.pool = new pg.Pool({
      Client: BoundedConnectClient,
      connectionString: options.connectionString,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.acquireTimeoutMs ?? 10_000,
      idleTimeoutMillis: options.idleTimeoutMs ?? 30_000,
      // Server side: no statement (lock waits included) runs longer, and a transaction left idle by
      // a stalled client does not keep its row locks.
      statement_timeout: statementTimeout,
      idle_in_transaction_session_timeout: statementTimeout * 2,
      // Client side, for a server that stops answering altogether (the connection is then discarded).
      query_timeout: statementTimeout + 2000,
      keepAlive: true,
      application_name: 'chatbridge',
      types,
    });
    // Without a listener an idle connection's error (server restart) would crash the process; the
    // pool drops that connection and the next query opens a new one.
    this.pool.on('error', (err) => options.onIdleError?.(err));
    this.messages = new PostgresMessageLog(this.pool, this.clock);
    this.batches = new TurnBatches({
      pool: this.pool,
      transaction: (work) => this.transaction(work),
      readOne: async (id) => toStored((await this.pool.query<EndpointRow>(statement('get', [id]))).rows[0]),
      writeOne: (db, w) => this.write(db, w.id, w.current, w.write),
      clock: this.clock,
      maxEvents: this.window.maxEvents,
    });
  }

  private async migrate(): Promise<void> {
    // A connection of its own: migrations get a longer statement timeout (SET LOCAL in migrate())
    // than requests do.
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      connectionTimeoutMillis: this.options.connectionTimeoutMs ?? 2000,
      query_timeout: MIGRATION_STATEMENT_TIMEOUT_MS + 5000,
      application_name: 'chatbridge-migrate',
    });
    client.on('error', () => undefined); // surfaced by the pending query instead
    await client.connect();
    try {
      await migrate(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** BEGIN ... COMMIT on one pooled connection; ROLLBACK and rethrow on any error. */
  private async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    // pg-pool listens for errors only on idle connections: one lost while checked out (the database
    // restarted, the backend terminated, the network cut) would emit an unhandled 'error' and end the
    // process. The pending query rejects with the same error, which answers the request 503.
    let lost: Error | undefined;
    const onError = (err: Error) => void (lost = err);
    client.on('error', onError);
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot even roll back is discarded instead of returned to the pool.
      broken = await client.query('ROLLBACK').then(
        () => undefined,
        (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
      );
      throw error;
    } finally {
      client.removeListener('error', onError);
      client.release(broken ?? lost); // a connection that failed is discarded, not pooled
    }
  }

  private async lockRow(client: pg.PoolClient, id: string): Promise<StoredEndpoint | undefined> {
    return toStored((await client.query<EndpointRow>(statement('lock', [id]))).rows[0]);
  }

  /**
   * Commits what `decide` decided about `current` (inside the caller's transaction, or on its own),
   * only if the row still has `current`'s version and token digest; false if it has changed or gone.
   */
  private async write(
    db: pg.Pool | pg.PoolClient,
    id: string,
    current: StoredEndpoint,
    write: NonNullable<Decision<unknown>['write']>,
    entries: ChannelEntry[] | undefined = changedChannelEntries(current.recordJson, write.record),
  ): Promise<boolean> {
    const { record, state, deliveries = [], dropDeliveriesTo = [] } = write;
    const params = [
      id,
      write.recordJson ?? JSON.stringify(record),
      state.seq,
      state.pendingSince,
      state.pendingSince === null ? null : state.seq,
      this.clock(),
      this.window.maxEvents,
      current.version,
      current.tokenHash,
      deliveries.map((d) => d.platform),
      deliveries.map((d) => d.url),
      deliveries.map((d) => d.payload),
      deliveries.map((d) => d.expiresAt),
      entries !== undefined,
      (entries ?? []).map((e) => e.platform),
      (entries ?? []).map((e) => channelKey(e.channel)),
      (entries ?? []).map((e) => e.bridge),
      dropDeliveriesTo.map((d) => d.platform),
      dropDeliveriesTo.map((d) => d.url),
      queueJson(state.queue),
    ];
    return (await db.query(statement('write', params))).rowCount === 1;
  }

  /** Decides about the locked row and writes the decision, inside the caller's transaction. */
  private async decideLocked<T>(
    client: pg.PoolClient,
    id: string,
    current: StoredEndpoint | undefined,
    decide: (current: StoredEndpoint | undefined) => Decision<T>,
  ): Promise<T> {
    const { write, result } = decide(current);
    if (write && current && (await this.write(client, id, current, write)) && write.messages) {
      await this.messages.apply(client, id, write.messages);
    }
    return result;
  }

  async get(id: string): Promise<StoredEndpoint | undefined> {
    return this.batches.read(id);
  }

  async update<T>(id: string, decide: (current: StoredEndpoint | undefined) => Decision<T>): Promise<T> {
    for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
      const current = await this.get(id);
      const { write, result } = decide(current);
      if (!write || !current) return result;
      // A write that changes the lookup index or drops deliveries is a configuration change, rare: it
      // goes as a statement of its own, and the turn's batched writes (messages, reads) stay as lean.
      const entries = changedChannelEntries(current.recordJson, write.record);
      if (write.messages) {
        // A write of the message log goes with the row in one transaction of its own.
        const messages = write.messages;
        const written = await this.transaction(async (client) => {
          if (!(await this.write(client, id, current, write, entries))) return false;
          await this.messages.apply(client, id, messages);
          return true;
        });
        if (written) return result;
        continue;
      }
      const alone = entries !== undefined || (write.dropDeliveriesTo?.length ?? 0) > 0;
      if (await (alone ? this.write(this.pool, id, current, write, entries) : this.batches.write({ id, current, write }))) return result;
    }
    return this.transaction(async (client) => this.decideLocked(client, id, await this.lockRow(client, id), decide));
  }

  async create(id: string, tokenHash: Uint8Array, record: EndpointRecord): Promise<boolean> {
    const entries = channelEntries(record);
    if (entries.length === 0) return (await this.pool.query(statement('create', [id, tokenHash, JSON.stringify(record)]))).rowCount === 1;
    const values = [
      id,
      tokenHash,
      JSON.stringify(record),
      entries.map((e) => e.platform),
      entries.map((e) => channelKey(e.channel)),
      entries.map((e) => e.bridge),
    ];
    return (await this.pool.query(statement('createIndexed', values))).rowCount === 1;
  }

  async lookupChannel(platform: Platform, channel: string, limit: number): Promise<ChannelMatch[]> {
    return (await this.pool.query<ChannelMatch>(statement('lookup', [platform, channelKey(channel), limit]))).rows.map((r) => ({
      endpoint: r.endpoint,
      bridge: r.bridge,
    }));
  }

  /** Streams authenticated with the old token hear of it (the notification) and end. */
  async setTokenHash(id: string, tokenHash: Uint8Array): Promise<boolean> {
    return (await this.pool.query(statement('setToken', [id, tokenHash]))).rowCount === 1;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.pool.query(statement('delete', [id]))).rowCount === 1;
  }

  async createBot(bot: StoredBot): Promise<boolean> {
    const sql = 'INSERT INTO bots (id, platform, key_hash) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING';
    return (await this.pool.query(sql, [bot.id, bot.platform, bot.keyHash])).rowCount === 1;
  }

  async setBotKeyHash(id: string, keyHash: Uint8Array): Promise<boolean> {
    return (await this.pool.query('UPDATE bots SET key_hash = $2 WHERE id = $1', [id, keyHash])).rowCount === 1;
  }

  async deleteBot(id: string): Promise<boolean> {
    return (await this.pool.query('DELETE FROM bots WHERE id = $1', [id])).rowCount === 1;
  }

  async listBots(): Promise<StoredBot[]> {
    const { rows } = await this.pool.query<{ id: string; platform: Platform; key_hash: Buffer }>(
      'SELECT id, platform, key_hash FROM bots ORDER BY id',
    );
    return rows.map((r) => ({ id: r.id, platform: r.platform, keyHash: r.key_hash }));
  }

  async listIds(after: string | undefined, limit: number): Promise<string[]> {
    return (await this.pool.query<{ id: string }>(statement('list', [after ?? '', limit]))).rows.map((r) => r.id);
  }

  async claimDeliveries(
    now: number,
    leaseMs: number,
    limits: number | Partial<Record<Platform, number>>,
    skip?: Partial<Record<Platform, readonly string[]>>,
  ): Promise<Delivery[]> {
    const lanes = claimLanes(limits, skip);
    if (lanes.length === 0) return [];
    // Several lanes in one transaction: if one claim fails, none is left leased with nobody sending it.
    const claimed =
      lanes.length === 1
        ? await this.claimLane(this.pool, now, leaseMs, lanes[0]!)
        : await this.transaction(async (client) => {
            const rows: OutboxRow[] = [];
            for (const lane of lanes) rows.push(...(await this.claimLane(client, now, leaseMs, lane)));
            return rows;
          });
    return claimed.map(toDelivery).sort((a, b) => a.id - b.id);
  }

  private async claimLane(
    db: pg.Pool | pg.PoolClient,
    now: number,
    leaseMs: number,
    [to, limit, passOver]: [Platform | null, number, readonly string[]],
  ): Promise<OutboxRow[]> {
    return (await db.query<OutboxRow>(statement('claim', [now + leaseMs, now, limit, to, passOver]))).rows;
  }

  async completeDelivery<T>(
    delivery: Delivery,
    decide: (current: StoredEndpoint | undefined, stillQueued: boolean) => Decision<T>,
  ): Promise<T> {
    return this.transaction(async (client) => {
      // Endpoint row first, then the entry: the lock order every writer uses (see the top).
      const current = await this.lockRow(client, delivery.endpointId);
      const stillQueued = (await client.query(statement('dequeue', [delivery.id]))).rowCount === 1;
      return this.decideLocked(client, delivery.endpointId, current, (row) => decide(row, stillQueued));
    });
  }

  async retryDelivery(id: number, nextAttemptAt: number): Promise<void> {
    await this.pool.query(statement('retry', [id, nextAttemptAt]));
  }

  async dropDelivery(id: number): Promise<void> {
    // Under its endpoint's row lock, as every path that removes an entry: the next head is then
    // chosen among every entry committed so far (migration 0008).
    await this.transaction(async (client) => {
      await client.query(statement('lockOf', [id]));
      await client.query(statement('dequeue', [id]));
    });
  }

  async holdDeliveries(endpointId: string, platform: Platform, url: string, until: number): Promise<void> {
    await this.pool.query(statement('hold', [endpointId, platform, url, until]));
  }

  async countDeliveries(): Promise<number> {
    return (await this.pool.query<{ n: number }>(SQL.count)).rows[0]!.n;
  }

  async countPending(): Promise<number> {
    return (await this.pool.query<{ n: number }>(SQL.countPending)).rows[0]!.n;
  }

  async listExpired(pendingBefore: number, limit: number): Promise<string[]> {
    return (await this.pool.query<{ id: string }>(statement('expired', [pendingBefore, limit]))).rows.map((r) => r.id);
  }

  async eventsSince(id: string, afterVersion: number, limit: number, maxBytes = Number.MAX_SAFE_INTEGER): Promise<EndpointEvent[]> {
    const since = this.clock() - this.window.maxAgeMs;
    const { rows } = await this.pool.query<EventRow>(statement('eventsSince', [id, afterVersion, since, limit, maxBytes]));
    return rows.map((row) => new LoggedEvent(row));
  }

  async changesSince(afterPosition: number, limit: number, maxBytes = Number.MAX_SAFE_INTEGER): Promise<ChangeRead> {
    const since = this.clock() - this.changeWindow.maxAgeMs;
    type Row = {
      position: number;
      endpoint_id: string;
      version: number;
      bytes: number | null;
      record: string | null;
      message_number: number | null;
      newest: number;
    };
    const { rows } = await this.pool.query<Row>(statement('changesSince', [afterPosition, since, limit, maxBytes]));
    const entries: ChangeEntry[] = rows.map((r) => ({
      position: r.position,
      endpointId: r.endpoint_id,
      version: r.version,
      event:
        r.record === null
          ? undefined
          : new LoggedEvent({ version: r.version, bytes: r.bytes!, record: r.record, message_number: r.message_number }),
    }));
    const newest = rows[0]?.newest ?? (await this.pool.query<{ n: number }>(statement('newestChange', []))).rows[0]!.n;
    let first: number | undefined;
    if (!(afterPosition > newest || afterPosition === newest || entries[0]?.position === afterPosition + 1)) {
      first = (await this.pool.query<{ n: number }>(statement('firstChange', [since]))).rows[0]?.n;
    }
    return { entries, newest, missed: missedChanges(afterPosition, entries, newest, () => first) };
  }

  async pruneEvents(): Promise<number> {
    const now = this.clock();
    const before = now - this.window.maxAgeMs;
    let total = 0;
    for (let batch = 0; batch < PRUNE_MAX_BATCHES; batch++) {
      const deleted = (await this.pool.query(statement('pruneEvents', [before, PRUNE_BATCH]))).rowCount ?? 0;
      total += deleted;
      if (deleted < PRUNE_BATCH) break;
    }
    const changesBefore = now - this.changeWindow.maxAgeMs;
    for (let batch = 0; batch < PRUNE_MAX_BATCHES; batch++) {
      const deleted =
        (await this.pool.query(statement('pruneChanges', [changesBefore, this.changeWindow.maxChanges, PRUNE_BATCH]))).rowCount ?? 0;
      total += deleted;
      if (deleted < PRUNE_BATCH) break;
    }
    return total;
  }

  /** A LISTEN connection of its own, beside the pool; it reconnects by itself. */
  async openChangeFeed(hooks: { onError?: (err: Error) => void } = {}): Promise<ChangeFeed> {
    if (this.closed) throw new Error('the store is closed');
    return PostgresChangeFeed.start({
      connectionString: this.options.connectionString,
      ...(this.options.connectionTimeoutMs !== undefined && { connectionTimeoutMs: this.options.connectionTimeoutMs }),
      ...(hooks.onError && { onError: hooks.onError }),
    });
  }

  /**
   * Every update leaves dead rows (the row's old version, the event pushed out of the window), which
   * only VACUUM reclaims. With autovacuum off (it is on by default), the tables grow without end (the
   * benchmark's event table: 226 MB holding no live row): the operator is told at start-up.
   */
  private async checkAutovacuum(): Promise<void> {
    const { rows } = await this.pool.query<{ on: boolean }>(`SELECT current_setting('autovacuum') = 'on' AS on`);
    if (rows[0]?.on === false) {
      this.options.onWarning?.(
        "PostgreSQL's autovacuum is off: chatbridge's tables collect dead rows with every update and grow without end; turn it on, or run VACUUM on them regularly",
      );
    }
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  async *exportRows(): AsyncIterable<EndpointSnapshot> {
    let after = '';
    for (;;) {
      const { rows } = await this.pool.query<SnapshotRow>(SNAPSHOT_SQL.page, [after, SNAPSHOT_PAGE_ROWS]);
      yield* rows.map(toSnapshot);
      if (rows.length < SNAPSHOT_PAGE_ROWS) return;
      after = rows[rows.length - 1]!.id;
    }
  }

  /**
   * One transaction on one connection: the rows are staged in TEMP tables (dropped at its end) a
   * batch per statement, then conflicts are looked for and, if there are none, the new endpoints and
   * their deliveries are inserted. The statements get IMPORT_STATEMENT_TIMEOUT_MS (a merge of many
   * thousand rows outlasts a request's limit).
   */
  async importRows(
    rows: AsyncIterable<EndpointSnapshot> | Iterable<EndpointSnapshot>,
    bots?: readonly StoredBot[],
  ): Promise<ImportOutcome> {
    return this.transaction(async (client) => {
      await client.query(`SET LOCAL statement_timeout = ${IMPORT_STATEMENT_TIMEOUT_MS}`);
      await client.query(SNAPSHOT_SQL.stagingTables);
      for await (const batch of batchesOf(rows, SNAPSHOT_PAGE_ROWS)) {
        const { endpoints: e, deliveries: d, messages: m } = snapshotColumns(batch);
        await client.query(SNAPSHOT_SQL.stage, [e.id, e.tokenHash, e.record, e.seq, e.pendingSince, e.version, e.queue]);
        if (m.endpointId.length > 0) {
          await client.query(SNAPSHOT_SQL.stageMessages, [
            m.endpointId,
            m.number,
            m.sender,
            m.senderChannel,
            m.message,
            m.unread,
            m.expired,
            m.createdAt,
          ]);
        }
        if (d.endpointId.length > 0) {
          await client.query(SNAPSHOT_SQL.stageDeliveries, [
            d.endpointId,
            d.seq,
            d.platform,
            d.url,
            d.payload,
            d.attempts,
            d.nextAttemptAt,
            d.expiresAt,
          ]);
        }
        // The lookup index's rows, derived here: SQL cannot read a record holding `\u0000` as an object.
        const channels = batch.flatMap((r) => channelEntries(JSON.parse(r.recordJson) as EndpointRecord).map((e) => ({ id: r.id, ...e })));
        if (channels.length > 0) {
          await client.query(SNAPSHOT_SQL.stageChannels, [
            channels.map((c) => c.id),
            channels.map((c) => c.platform),
            channels.map((c) => channelKey(c.channel)),
            channels.map((c) => c.bridge),
          ]);
        }
      }
      const conflicts = (await client.query<{ id: string }>(SNAPSHOT_SQL.conflicts)).rows.map((r) => r.id);
      const existing = Number((await client.query<{ n: string }>(SNAPSHOT_SQL.existing)).rows[0]!.n);
      const botPlan =
        bots &&
        planBotImport(
          (
            await client.query<{ id: string; platform: Platform; key_hash: Uint8Array }>('SELECT id, platform, key_hash FROM bots')
          ).rows.map((r) => ({ id: r.id, platform: r.platform, keyHash: r.key_hash })),
          bots,
        );
      const botOutcome = (imported: number) =>
        botPlan && { bots: { imported, unchanged: botPlan.unchanged, conflicts: botPlan.conflicts } };
      if (conflicts.length > 0 || (botPlan?.conflicts.length ?? 0) > 0)
        return { imported: 0, unchanged: existing - conflicts.length, conflicts, ...botOutcome(0) };
      await client.query(SNAPSHOT_SQL.markFresh);
      const imported = (await client.query(SNAPSHOT_SQL.insert)).rowCount ?? 0;
      await client.query(SNAPSHOT_SQL.insertDeliveries);
      await client.query(SNAPSHOT_SQL.insertMessages);
      await client.query(SNAPSHOT_SQL.indexInserted);
      // No ON CONFLICT: a bot another instance creates meanwhile fails the whole import.
      const fresh = botPlan?.fresh ?? [];
      if (fresh.length > 0)
        await client.query('INSERT INTO bots (id, platform, key_hash) SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[])', [
          fresh.map((b) => b.id),
          fresh.map((b) => b.platform),
          fresh.map((b) => Buffer.from(b.keyHash)),
        ]);
      return { imported, unchanged: existing, conflicts, ...botOutcome(fresh.length) };
    });
  }
}

/** The longest one statement of an import may run (staging a batch, or the merge of every row). */
const IMPORT_STATEMENT_TIMEOUT_MS = 300_000;

const SNAPSHOT_SQL = {
  page: `SELECT e.id, e.token_hash, e.record, e.message_seq, e.pending_since, e.version, e.queue,
           coalesce((SELECT json_agg(json_build_object('messageSeq', o.message_seq, 'platform', o.platform, 'url', o.url, 'payload', o.payload,
                                                       'attempts', o.attempts, 'nextAttemptAt', o.next_attempt_at, 'expiresAt', o.expires_at)
                                     ORDER BY o.id)
                     FROM outbox o WHERE o.endpoint_id = e.id), '[]')::text AS deliveries,
           coalesce((SELECT json_agg(json_build_object('number', m.number, 'sender', m.sender, 'senderChannel', m.sender_channel,
                                                       'message', m.message, 'unread', m.unread, 'expired', m.expired, 'createdAt', m.created_at)
                                     ORDER BY m.number)
                     FROM messages m WHERE m.endpoint_id = e.id), '[]')::text AS messages
         FROM endpoints e WHERE e.id > $1 ORDER BY e.id LIMIT $2`,
  stagingTables: `CREATE TEMP TABLE import_endpoints (
                    id text COLLATE "C" PRIMARY KEY, token_hash bytea NOT NULL, record text NOT NULL, message_seq bigint NOT NULL,
                    pending_since bigint, version bigint NOT NULL, queue text NOT NULL, fresh boolean) ON COMMIT DROP;
                  CREATE TEMP TABLE import_messages (
                    endpoint_id text COLLATE "C" NOT NULL, number bigint NOT NULL, sender text, sender_channel text, message text NOT NULL,
                    unread integer NOT NULL, expired integer NOT NULL, created_at bigint NOT NULL) ON COMMIT DROP;
                  CREATE TEMP TABLE import_deliveries (
                    ord bigint GENERATED ALWAYS AS IDENTITY, endpoint_id text COLLATE "C" NOT NULL, message_seq bigint NOT NULL,
                    platform text NOT NULL, url text NOT NULL, payload text NOT NULL, attempts integer NOT NULL,
                    next_attempt_at bigint NOT NULL, expires_at bigint NOT NULL) ON COMMIT DROP;
                  CREATE TEMP TABLE import_channels (
                    endpoint_id text COLLATE "C" NOT NULL, platform text COLLATE "C" NOT NULL, channel text COLLATE "C" NOT NULL,
                    bridge integer NOT NULL) ON COMMIT DROP`,
  stage: `INSERT INTO import_endpoints (id, token_hash, record, message_seq, pending_since, version, queue)
          SELECT * FROM unnest($1::text[], $2::bytea[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::text[])`,
  stageMessages: `INSERT INTO import_messages (endpoint_id, number, sender, sender_channel, message, unread, expired, created_at)
                  SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::integer[], $7::integer[], $8::bigint[])`,
  insertMessages: `INSERT INTO messages (endpoint_id, number, sender, sender_channel, message, unread, expired, created_at)
                   SELECT m.endpoint_id, m.number, m.sender, m.sender_channel, m.message, m.unread, m.expired, m.created_at
                   FROM import_messages m JOIN import_endpoints s ON s.id = m.endpoint_id WHERE s.fresh`,
  stageDeliveries: `INSERT INTO import_deliveries (endpoint_id, message_seq, platform, url, payload, attempts, next_attempt_at, expires_at)
                    SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::integer[], $7::bigint[], $8::bigint[])`,
  conflicts: `SELECT s.id FROM import_endpoints s JOIN endpoints e ON e.id = s.id
              WHERE e.token_hash <> s.token_hash OR e.record <> s.record OR e.message_seq <> s.message_seq
                 OR e.pending_since IS DISTINCT FROM s.pending_since OR e.version <> s.version OR e.queue <> s.queue
              ORDER BY s.id`,
  existing: 'SELECT count(*) AS n FROM import_endpoints s JOIN endpoints e ON e.id = s.id',
  markFresh: 'UPDATE import_endpoints s SET fresh = NOT EXISTS (SELECT 1 FROM endpoints e WHERE e.id = s.id)',
  // No ON CONFLICT: an endpoint another instance creates meanwhile fails the whole import instead of
  // leaving it half done.
  insert: `INSERT INTO endpoints (id, token_hash, record, message_seq, pending_since, version, queue)
           SELECT id, token_hash, record, message_seq, pending_since, version, queue FROM import_endpoints WHERE fresh`,
  insertDeliveries: `INSERT INTO outbox (endpoint_id, message_seq, platform, url, payload, attempts, next_attempt_at, expires_at)
                     SELECT d.endpoint_id, d.message_seq, d.platform, d.url, d.payload, d.attempts, d.next_attempt_at, d.expires_at
                     FROM import_deliveries d JOIN import_endpoints s ON s.id = d.endpoint_id WHERE s.fresh
                     ORDER BY d.ord`,
  stageChannels: `INSERT INTO import_channels (endpoint_id, platform, channel, bridge)
                  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[])`,
  // The lookup index of the endpoints inserted.
  indexInserted: `INSERT INTO channel_index (platform, channel, endpoint_id, bridge)
                  SELECT c.platform, c.channel, c.endpoint_id, c.bridge FROM import_channels c JOIN import_endpoints s ON s.id = c.endpoint_id
                  WHERE s.fresh
                  ON CONFLICT DO NOTHING`,
} as const;
