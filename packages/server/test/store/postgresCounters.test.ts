// The shared counters batch the writes of a turn into one statement; their answers are checked
// against rate-limiter-flexible's own PostgreSQL limiter.
import pg from 'pg';
import { RateLimiterPostgres, type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WindowLimiter } from '../../src/store/counters.ts';
import { PostgresCounters } from '../../src/store/postgres/counters.ts';
import { migrate } from '../../src/store/postgres/store.ts';
import { createScratchDatabase, type ScratchDatabase, withClient } from '../store/pgScratch.ts';

const DATABASE_URL = process.env.DATABASE_URL;

describe.runIf(!!DATABASE_URL)('PostgresCounters', () => {
  let db: ScratchDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    db = await createScratchDatabase(DATABASE_URL!);
    await withClient(db.url, (c) => migrate(c)); // the counters' table is the schema's
    pool = new pg.Pool({ connectionString: db.url, max: 4 });
    // The scratch database is dropped with FORCE at the end: an idle client told so must not be an uncaught error.
    pool.on('error', () => undefined);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  const openLibrary = (keyPrefix: string) =>
    new Promise<RateLimiterAbstract>((resolve, reject) => {
      const limiter: RateLimiterAbstract = new RateLimiterPostgres(
        { storeClient: pool, tableName: 'rate_limits', keyPrefix, points: 3, duration: 60 },
        (err?: Error) => (err ? reject(err) : resolve(limiter)),
      );
    });
  const open = async (keyPrefix: string): Promise<WindowLimiter> => {
    const counters = new PostgresCounters(pool);
    const limiter = counters.limiter({ keyPrefix, points: 3, duration: 60 });
    counters.close();
    return limiter;
  };

  /** The names of the statements the limiters send while `work` runs. */
  const statementsDuring = async (work: () => Promise<unknown>): Promise<string[]> => {
    const names: string[] = [];
    const original = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const name = (args[0] as { name?: string } | undefined)?.name;
      if (name) names.push(name);
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    try {
      await work();
    } finally {
      pg.Client.prototype.query = original;
    }
    return names;
  };

  /** remainingPoints and whether it was refused, for each consume of `keys`, all at once. */
  const consumeAll = async (limiter: WindowLimiter | RateLimiterAbstract, keys: string[]) =>
    Promise.all(
      keys.map((key) =>
        limiter.consume(key).then(
          (res) => `${key}:${res.remainingPoints}`,
          (rej: unknown) => (rej instanceof RateLimiterRes ? `${key}:refused` : Promise.reject(rej)),
        ),
      ),
    );

  it('when many keys are consumed in one turn, then one statement writes all their counters', async () => {
    const limiter = await open('one-statement');
    const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
    const names = await statementsDuring(() => consumeAll(limiter, keys));
    expect(names.filter((n) => n.endsWith('chatbridge-upsert-batch'))).toHaveLength(1);
    expect(names.filter((n) => n.endsWith('rlflx-upsert'))).toHaveLength(0);
  });

  it('when keys repeat within a turn, then every caller gets what the library alone would answer', async () => {
    const keys = ['a', 'b', 'a', 'a', 'c', 'a', 'b'];
    const batched = await consumeAll(await open('batched'), keys);
    const plain: string[] = [];
    const library = await openLibrary('plain');
    for (const key of keys) plain.push(...(await consumeAll(library, [key]))); // one at a time, in order
    expect(batched).toEqual(plain);
    expect(batched).toEqual(['a:2', 'b:2', 'a:1', 'a:0', 'c:2', 'a:refused', 'b:1']);
  });

  it('when the database fails a counter write, then the insurance limiter answers instead', async () => {
    const broken = new pg.Pool({ connectionString: db.url, max: 1 });
    const insurance = { consume: async () => new RateLimiterRes(7, 1000, 1, true) };
    const counters = new PostgresCounters(broken, { insurance: () => insurance });
    const limiter = counters.limiter({ keyPrefix: 'insured', points: 3, duration: 60 });
    counters.close();
    await broken.end(); // every later query fails
    expect((await limiter.consume('k')).remainingPoints).toBe(7);
  });

  it('when rows expired more than an hour ago, then a sweep deletes them and keeps the live ones', async () => {
    const counters = new PostgresCounters(pool);
    await consumeAll(counters.limiter({ keyPrefix: 'sweep', points: 3, duration: 60 }), ['live', 'old']);
    counters.close();
    await pool.query(`UPDATE rate_limits SET expire = $1 WHERE key = 'sweep:old'`, [Date.now() - 2 * 3_600_000]);
    await counters.sweep();
    const { rows } = await pool.query<{ key: string }>(`SELECT key FROM rate_limits WHERE key LIKE 'sweep:%' ORDER BY key`);
    expect(rows.map((r) => r.key)).toEqual(['sweep:live']);
  });
});
