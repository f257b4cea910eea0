// Fixed-window counters in the shared PostgreSQL database, for the rate limits of several instances.
// rate-limiter-flexible's PostgreSQL limiter writes a counter (an upsert, a round trip) per request;
// here the counter writes of one event-loop turn go to PostgreSQL as one statement, whatever their
// keys and limits. The table (migration 0003) is the library's (`key`, `points`, `expire` in epoch
// ms), and so are the answers: a RateLimiterRes, resolved within the limit and rejected past it, as
// its limiter gives.
//
// Each caller gets the answer it would have had alone, in order: callers of one key in one turn see
// the counter as it stood after their own points (the statement adds all of them at once). Keys are
// locked in sorted order, so two instances' batches cannot deadlock.
//
// The counters share the store's pool. A counter write that has not answered within
// COUNTER_TIMEOUT_MS (the database down or too slow, the pool busy) is answered by an in-memory
// limiter instead, so a request goes on to the store, whose own timeouts answer it 503.
import type pg from 'pg';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Counters, WindowLimit, WindowLimiter } from '../counters.ts';
import { memoryLimiter } from '../memoryCounters.ts';

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

/** How long a shared counter may take (queue, connect or statement) before the in-memory insurance counts. */
const COUNTER_TIMEOUT_MS = 1000;

export interface PostgresCountersOptions {
  /** The limiter that answers when a counter write fails; default: one in this process's memory. */
  insurance?: (limit: WindowLimit) => WindowLimiter;
}

export class PostgresCounters implements Counters {
  /** Counter writes of this turn, by the window they open (ms): one statement per window length. */
  private pending = new Map<number, PendingWrite[]>();
  private sweeper: NodeJS.Timeout | undefined;

  private readonly pool: pg.Pool;
  private readonly insurance: (limit: WindowLimit) => WindowLimiter;

  constructor(pool: pg.Pool, options: PostgresCountersOptions = {}) {
    this.pool = pool;
    this.insurance = options.insurance ?? memoryLimiter;
  }

  /** A limiter over these counters; the first starts deleting expired rows now and then. */
  limiter(limit: WindowLimit): WindowLimiter {
    this.sweeper ??= setInterval(() => void this.sweep().catch(() => undefined), SWEEP_EVERY_MS).unref();
    const msDuration = limit.duration * 1000;
    const insurance = this.insurance(limit);
    return {
      consume: (key) =>
        this.add(`${limit.keyPrefix}:${key}`, msDuration).then(
          (row) => {
            const res = answer(row, limit.points);
            if (res.consumedPoints > limit.points) throw res;
            return res;
          },
          () => insurance.consume(key),
        ),
    };
  }

  /** Stops the sweeping; the pool is the store's to end. */
  close(): void {
    clearInterval(this.sweeper);
  }

  /** Deletes the rows whose window ended more than an hour ago. */
  async sweep(now = Date.now()): Promise<void> {
    await this.pool.query({
      name: 'chatbridge-counters-sweep',
      text: 'DELETE FROM rate_limits WHERE expire < $1',
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
    // Past the deadline the callers hear from the insurance; a late answer then settles nothing.
    const deadline = setTimeout(() => {
      const late = new Error(`the rate-limit counters did not answer within ${COUNTER_TIMEOUT_MS} ms`);
      for (const w of writes) w.reject(late);
    }, COUNTER_TIMEOUT_MS);
    let rows: CounterRow[];
    try {
      // A counter past its expiry starts again. query_timeout: a connection whose statement hangs is
      // discarded rather than kept busy.
      ({ rows } = await this.pool.query<CounterRow>({
        name: 'chatbridge-upsert-batch',
        text: `INSERT INTO rate_limits (key, points, expire)
                 SELECT k, p, $3 FROM unnest($1::varchar[], $2::int[]) AS t (k, p)
               ON CONFLICT (key) DO UPDATE SET
                 points = CASE WHEN rate_limits.expire <= $4 THEN EXCLUDED.points ELSE rate_limits.points + EXCLUDED.points END,
                 expire = CASE WHEN rate_limits.expire <= $4 THEN EXCLUDED.expire ELSE rate_limits.expire END
               RETURNING key, points, expire`,
        values: [keys, keys.map((k) => totals.get(k)!), now + msDuration, now],
        query_timeout: COUNTER_TIMEOUT_MS,
      } as pg.QueryConfig));
    } catch (error) {
      for (const w of writes) w.reject(error);
      return;
    } finally {
      clearTimeout(deadline);
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
