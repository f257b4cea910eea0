// Fixed-window counters in the shared PostgreSQL database, for the rate limits of several instances.
// rate-limiter-flexible's PostgreSQL limiter writes a counter (an upsert, a round trip) per request;
// here the counter writes of one event-loop turn go to PostgreSQL as one statement, whatever their
// keys and limits. The table is the library's (`key`, `points`, `expire` in epoch ms), and so are the
// answers: a RateLimiterRes, resolved within the limit and rejected past it, as its limiter gives.
//
// Each caller gets the answer it would have had alone, in order: callers of one key in one turn see
// the counter as it stood after their own points (the statement adds all of them at once). Keys are
// locked in sorted order, so two instances' batches cannot deadlock.
import pg from 'pg';
import { RateLimiterRes } from 'rate-limiter-flexible';

/** What the rate limits ask of a limiter: rate-limiter-flexible's `consume`, one point at a time. */
export interface WindowLimiter {
  /** Resolves while the key's window holds at most the limit's points; rejects with a RateLimiterRes past it. */
  consume(key: string): Promise<RateLimiterRes>;
}

export interface WindowLimit {
  /** Keys of this limit are stored as `keyPrefix:key`. */
  keyPrefix: string;
  /** Points a key may consume per window. */
  points: number;
  /** The window, in seconds. */
  duration: number;
  /** Answers instead of the database when a counter write fails (the database down or too slow). */
  insurance?: WindowLimiter;
}

interface CounterRow {
  key: string;
  points: number;
  expire: string | number;
}

interface PendingWrite {
  key: string;
  resolve: (row: { points: number; expire: number }) => void;
  reject: (error: unknown) => void;
}

/** How often rows whose window has passed are deleted, and how long after their expiry (clock skew between instances). */
const SWEEP_EVERY_MS = 5 * 60_000;
const SWEEP_AFTER_MS = 60 * 60_000;

/** The table's name is ours, never input: a plain identifier. */
const TABLE_NAME = /^[a-z_][a-z0-9_]*$/;

export class PostgresCounters {
  /** Counter writes of this turn, by the window they open (ms): one statement per window length. */
  private pending = new Map<number, PendingWrite[]>();
  private sweeper: NodeJS.Timeout | undefined;

  private readonly pool: pg.Pool;
  private readonly table: string;

  private constructor(pool: pg.Pool, table: string) {
    this.pool = pool;
    this.table = table;
  }

  /** Creates the table if it does not exist yet, and starts deleting expired rows now and then. */
  static async open(pool: pg.Pool, table = 'rate_limits'): Promise<PostgresCounters> {
    if (!TABLE_NAME.test(table)) throw new Error(`not a table name: ${table}`);
    const statement = `CREATE TABLE IF NOT EXISTS ${table} (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)`;
    // Instances starting together can collide on the catalog even with IF NOT EXISTS (a unique
    // violation on pg_type): the table then exists, made by another. Other failures are retried.
    for (let attempt = 1; ; attempt++) {
      try {
        await pool.query(statement);
        break;
      } catch (error) {
        if ((error as { code?: string }).code === '23505') break;
        if (attempt >= 3) throw error;
      }
    }
    const counters = new PostgresCounters(pool, table);
    counters.sweeper = setInterval(() => void counters.sweep().catch(() => undefined), SWEEP_EVERY_MS).unref();
    return counters;
  }

  /** A limiter over these counters. */
  limiter(limit: WindowLimit): WindowLimiter {
    const msDuration = limit.duration * 1000;
    return {
      consume: (key) =>
        this.add(`${limit.keyPrefix}:${key}`, msDuration).then(
          (row) => {
            const res = answer(row, limit.points);
            if (res.consumedPoints > limit.points) throw res;
            return res;
          },
          (error: unknown) => (limit.insurance ? limit.insurance.consume(key) : Promise.reject(error)),
        ),
    };
  }

  /** Stops the sweeping; the pool is its owner's to end. */
  close(): void {
    clearInterval(this.sweeper);
  }

  /** Deletes the rows whose window ended more than an hour ago. */
  async sweep(now = Date.now()): Promise<void> {
    await this.pool.query({
      name: 'chatbridge-counters-sweep',
      text: `DELETE FROM ${this.table} WHERE expire < $1`,
      values: [now - SWEEP_AFTER_MS],
    });
  }

  /** Adds a point to the key's counter (a new window when the last one has passed): its points and expiry after that. */
  private add(key: string, msDuration: number): Promise<{ points: number; expire: number }> {
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) setImmediate(() => this.flush());
      const writes = this.pending.get(msDuration) ?? [];
      writes.push({ key, resolve, reject });
      this.pending.set(msDuration, writes);
    });
  }

  private flush(): void {
    const batches = [...this.pending];
    // A fresh map, not clear(): V8 leaves a cleared old-space map's entries in its obsolete table until the
    // next mark-compact, and scavenges then keep (and promote) each turn's writes through it.
    this.pending = new Map();
    for (const [msDuration, writes] of batches) void this.write(msDuration, writes);
  }

  private async write(msDuration: number, writes: PendingWrite[]): Promise<void> {
    const totals = new Map<string, number>();
    for (const w of writes) totals.set(w.key, (totals.get(w.key) ?? 0) + 1);
    const keys = [...totals.keys()].sort();
    const now = Date.now();
    const table = this.table;
    let rows: CounterRow[];
    try {
      // A counter past its expiry starts again.
      ({ rows } = await this.pool.query<CounterRow>({
        name: 'chatbridge-upsert-batch',
        text: `INSERT INTO ${table} (key, points, expire)
                 SELECT k, p, $3 FROM unnest($1::varchar[], $2::int[]) AS t (k, p)
               ON CONFLICT (key) DO UPDATE SET
                 points = CASE WHEN ${table}.expire <= $4 THEN EXCLUDED.points ELSE ${table}.points + EXCLUDED.points END,
                 expire = CASE WHEN ${table}.expire <= $4 THEN EXCLUDED.expire ELSE ${table}.expire END
               RETURNING key, points, expire`,
        values: [keys, keys.map((k) => totals.get(k)!), now + msDuration, now],
      }));
    } catch (error) {
      for (const w of writes) w.reject(error);
      return;
    }
    const byKey = new Map(rows.map((r) => [r.key, r]));
    // Each caller sees the counter less the points of the callers of its key after it.
    const later = new Map<string, number>();
    const seen = new Array<number>(writes.length);
    for (let i = writes.length - 1; i >= 0; i--) {
      const { key } = writes[i]!;
      seen[i] = later.get(key) ?? 0;
      later.set(key, seen[i]! + 1);
    }
    writes.forEach((w, i) => {
      const row = byKey.get(w.key);
      if (row) w.resolve({ points: row.points - seen[i]!, expire: Number(row.expire) });
      else w.reject(new Error(`rate-limit counter ${w.key} was not written`));
    });
  }
}

/** The answer for one point added to a counter, as rate-limiter-flexible words it. */
function answer(row: { points: number; expire: number }, limit: number): RateLimiterRes {
  const isFirstInDuration = row.points === 1;
  return new RateLimiterRes(Math.max(limit - row.points, 0), Math.max(row.expire - Date.now(), 0), row.points, isFirstInDuration);
}

/** How long a shared counter may take (connect, queue or statement) before the in-memory insurance counts. */
const COUNTER_TIMEOUT_MS = 1000;

/** Shared counters on their own small pool, ended with them. */
export interface SharedCounters {
  counters: PostgresCounters;
  close(): Promise<void>;
}

/**
 * Opens the counters' pool. It is apart from the store's: a counter write takes a millisecond or two,
 * and when the database stops answering the limiters fall back to their in-memory insurance after at
 * most a second, while the request goes on to the store, whose own timeouts answer it 503.
 */
export async function openSharedCounters(databaseUrl: string, onConnectionError: (message: string) => void): Promise<SharedCounters> {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 4,
    connectionTimeoutMillis: COUNTER_TIMEOUT_MS,
    statement_timeout: COUNTER_TIMEOUT_MS,
    query_timeout: COUNTER_TIMEOUT_MS,
    keepAlive: true,
    application_name: 'chatbridge-rate-limits',
  });
  pool.on('error', (err) => onConnectionError(err.message));
  try {
    const counters = await PostgresCounters.open(pool);
    return {
      counters,
      close: async () => {
        counters.close();
        await pool.end();
      },
    };
  } catch (error) {
    await pool.end();
    throw error;
  }
}
