// The PostgreSQL rate limiter batches its counter writes by overriding a step of rate-limiter-flexible
// that is not part of the library's public API: these tests fail if an upgrade stops calling it, and
// check the answers against the library's own limiter.
import pg from 'pg';
import { RateLimiterPostgres, type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchedRateLimiterPostgres } from '../../src/http/batchedPostgresLimiter.ts';
import { createScratchDatabase, type ScratchDatabase } from '../store/pgScratch.ts';

const DATABASE_URL = process.env.DATABASE_URL;

describe.runIf(!!DATABASE_URL)('BatchedRateLimiterPostgres', () => {
  let db: ScratchDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    db = await createScratchDatabase(DATABASE_URL!);
    pool = new pg.Pool({ connectionString: db.url, max: 4 });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  const open = (Limiter: typeof RateLimiterPostgres | typeof BatchedRateLimiterPostgres, keyPrefix: string) =>
    new Promise<RateLimiterAbstract>((resolve, reject) => {
      const limiter: RateLimiterAbstract = new Limiter({ storeClient: pool, tableName: 'rate_limits', keyPrefix, points: 3, duration: 60 }, (err?: Error) =>
        err ? reject(err) : resolve(limiter),
      );
    });

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
  const consumeAll = async (limiter: RateLimiterAbstract, keys: string[]) =>
    Promise.all(
      keys.map((key) =>
        limiter.consume(key).then(
          (res) => `${key}:${res.remainingPoints}`,
          (rej: unknown) => (rej instanceof RateLimiterRes ? `${key}:refused` : Promise.reject(rej)),
        ),
      ),
    );

  it('when many keys are consumed in one turn, then one statement writes all their counters', async () => {
    const limiter = await open(BatchedRateLimiterPostgres, 'one-statement');
    const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
    const names = await statementsDuring(() => consumeAll(limiter, keys));
    expect(names.filter((n) => n.endsWith('chatbridge-upsert-batch'))).toHaveLength(1);
    expect(names.filter((n) => n.endsWith('rlflx-upsert'))).toHaveLength(0);
  });

  it('when keys repeat within a turn, then every caller gets what the library alone would answer', async () => {
    const keys = ['a', 'b', 'a', 'a', 'c', 'a', 'b'];
    const batched = await consumeAll(await open(BatchedRateLimiterPostgres, 'batched'), keys);
    const plain: string[] = [];
    const library = await open(RateLimiterPostgres, 'plain');
    for (const key of keys) plain.push(...(await consumeAll(library, [key]))); // one at a time, in order
    expect(batched).toEqual(plain);
    expect(batched).toEqual(['a:2', 'b:2', 'a:1', 'a:0', 'c:2', 'a:refused', 'b:1']);
  });
});
