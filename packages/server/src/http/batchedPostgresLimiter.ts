// rate-limiter-flexible's PostgreSQL limiter, with the counter writes of one event-loop turn sent to
// PostgreSQL as one statement. The library writes a counter (an upsert, a round trip) on every
// request; the benchmark showed that round trip halving what a GET on PostgreSQL can serve (2.3-2.8k
// against 4.3-4.7k req/s with the limit off). The limits, the counting and the answers stay the
// library's: only its storage step (_upsert) is batched, with the same SQL over several keys.
//
// Each caller gets the answer it would have had alone, in order: callers of one key in one turn see
// the counter as it stood after their own points (the statement adds all of them at once). Keys are
// locked in sorted order, so two instances' batches cannot deadlock.
import { RateLimiterPostgres } from 'rate-limiter-flexible';

/** The parts of RateLimiterPostgres this subclass relies on (not in the library's typings). */
interface LimiterInternals {
  tableCreated: boolean;
  _getTableIdentifier(): string;
  _query(q: { name?: string; text: string; values: unknown[] }): Promise<{ rows: CounterRow[] }>;
  _upsert(key: string, points: number, msDuration: number, forceExpire?: boolean, options?: object): Promise<{ rows: CounterRow[] }>;
}

interface CounterRow {
  key: string;
  points: number;
  expire: string | number | null;
}

interface PendingWrite {
  key: string;
  points: number;
  resolve: (result: { rows: CounterRow[] }) => void;
  reject: (error: unknown) => void;
}

const Base = RateLimiterPostgres as unknown as new (options: object, callback?: (err?: Error) => void) => RateLimiterPostgres & LimiterInternals;

export class BatchedRateLimiterPostgres extends Base {
  /** Counter writes of this turn, by the window they open (ms): one statement per window length. */
  private pending = new Map<number, PendingWrite[]>();

  override _upsert(key: string, points: number, msDuration: number, forceExpire = false, options?: object): Promise<{ rows: CounterRow[] }> {
    // A forced expiry (block) or an endless key is rare: the library's own statement.
    if (forceExpire || msDuration <= 0) return super._upsert(key, points, msDuration, forceExpire, options);
    if (!this.tableCreated) return Promise.reject(new Error('Table is not created yet'));
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) setImmediate(() => this.flush());
      const writes = this.pending.get(msDuration) ?? [];
      writes.push({ key, points, resolve, reject });
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
    for (const w of writes) totals.set(w.key, (totals.get(w.key) ?? 0) + w.points);
    const keys = [...totals.keys()].sort();
    const now = Date.now();
    const table = this._getTableIdentifier();
    let rows: CounterRow[];
    try {
      // The library's upsert, over several keys: a counter past its expiry starts again.
      ({ rows } = await this._query({
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
      const { key, points } = writes[i]!;
      seen[i] = later.get(key) ?? 0;
      later.set(key, seen[i]! + points);
    }
    writes.forEach((w, i) => {
      const row = byKey.get(w.key);
      if (row) w.resolve({ rows: [{ key: w.key, points: row.points - seen[i]!, expire: row.expire }] });
      else w.reject(new Error(`rate-limit counter ${w.key} was not written`));
    });
  }
}
