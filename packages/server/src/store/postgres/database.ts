// The PostgreSQL store's query runner, shared by its aggregates: one pool per process (the rate-limit
// counters use it too), transactions on one pooled connection, statements prepared once per
// connection, and the schema's migrations.
//
// Every failure (database down, pool exhausted, statement timeout) rejects the returned promise;
// the timeouts below bound how long any call can wait.
import pg from 'pg';
import { type ChangeLogWindow, DEFAULT_CHANGE_WINDOW, DEFAULT_EVENT_WINDOW, type EventLogWindow } from '../changes.ts';
import { type Migration, loadMigrations as loadMigrationFiles, pendingMigrations } from '../migrations.ts';

export interface PostgresStoreOptions {
  /** libpq-style URL: postgres://user:password@host:5432/database?sslmode=... */
  connectionString: string;
  /** Connections per instance (default 10). Several instances share the server's max_connections. */
  poolSize?: number;
  /** Opening a new connection fails after this (default {@link DEFAULT_CONNECT_TIMEOUT_MS}). */
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

/** The PostgreSQL schema's migrations (postgres/migrations/), read from the files shipped with the code. */
export const loadMigrations = (): Migration[] => loadMigrationFiles(new URL('./migrations/', import.meta.url));

/**
 * How long opening a connection may take. PostgreSQL forks a backend for each one, which on a busy
 * host takes seconds rather than milliseconds; a database that is really gone is still reported well
 * within a bot's 10 s request timeout.
 */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5000;

/** Migrations may legitimately take longer than a request; they still must not hang forever. */
const MIGRATION_STATEMENT_TIMEOUT_MS = 60_000;

/**
 * Applies the migrations this database has not recorded in `schema_migrations`, all in one
 * transaction, and returns the versions it applied. Instances starting together serialise on a
 * transaction-level advisory lock: the first applies, the others then find everything recorded.
 * PostgreSQL's transactional DDL makes a failed run leave nothing behind (so a migration must be
 * transactional: no CREATE INDEX CONCURRENTLY). Versions recorded but unknown to this code (a newer
 * release already migrated) are left alone, so migrations must stay backward compatible for rolling
 * deploys.
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
    for (const m of pendingMigrations(migrations, (version) => done.has(version))) {
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

/** Where a statement runs: on its own (the pool), or inside a caller's transaction (its connection). */
export type Queryable = pg.Pool | pg.PoolClient;

/**
 * A query as a named prepared statement: PostgreSQL parses and plans it once per connection instead
 * of on every call, where an update's CPU would otherwise go.
 */
export const prepared = (name: string, text: string, values: unknown[]): pg.QueryConfig => ({ name: `chatbridge.${name}`, text, values });

export class PostgresDatabase {
  readonly pool: pg.Pool;
  readonly options: PostgresStoreOptions;
  readonly clock: () => number;
  readonly eventWindow: EventLogWindow;
  readonly changeWindow: ChangeLogWindow;
  closed = false;

  constructor(options: PostgresStoreOptions) {
    this.options = options;
    this.clock = options.clock ?? Date.now;
    this.eventWindow = { ...DEFAULT_EVENT_WINDOW, ...options.eventWindow };
    this.changeWindow = { ...DEFAULT_CHANGE_WINDOW, ...options.changeWindow };
    const statementTimeout = options.statementTimeoutMs ?? 5000;
    const connectTimeout = options.connectionTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
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
  }

  /** Brings the schema up to date, on a connection of its own: migrations get a longer statement timeout. */
  async migrate(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      connectionTimeoutMillis: this.options.connectionTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
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
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
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

  /**
   * Every update leaves dead rows (the row's old version, the event pushed out of the window), which
   * only VACUUM reclaims. With autovacuum off (it is on by default), the tables grow without end (the
   * benchmark's event table: 226 MB holding no live row): the operator is told at start-up.
   */
  async checkAutovacuum(): Promise<void> {
    const { rows } = await this.pool.query<{ on: boolean }>(`SELECT current_setting('autovacuum') = 'on' AS on`);
    if (rows[0]?.on === false) {
      this.options.onWarning?.(
        "PostgreSQL's autovacuum is off: chatbridge's tables collect dead rows with every update and grow without end; turn it on, or run VACUUM on them regularly",
      );
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
