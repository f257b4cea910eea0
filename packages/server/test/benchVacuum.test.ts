// The benchmarks vacuum chatbridge's PostgreSQL tables before they measure and after they clean up
// (bench/lib/vacuum.ts), so that no run measures the dead rows of the runs before it.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatbridgeTables, vacuumTables } from '../../../bench/lib/vacuum.ts';
import { openStore } from '../src/store/open.ts';
import { hashToken } from '../src/tokens.ts';
import { initialRecord } from '../src/domain/record.ts';
import { createScratchDatabase, type ScratchDatabase, withClient } from './store/pgScratch.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DATABASE_URL = process.env.DATABASE_URL;

it('when the tables are read from the migrations, then every table they create is named, unlogged ones included', () => {
  expect(chatbridgeTables(ROOT)).toEqual(['endpoint_events', 'endpoints', 'outbox', 'rate_limits']);
});

it('when the database cannot be reached, then the failure is returned, not thrown', async () => {
  const done = await vacuumTables('postgres://postgres@127.0.0.1:1/nothing', ['endpoints']);
  expect(done).toEqual({ error: expect.any(String) });
});

describe.runIf(!!DATABASE_URL)('vacuuming chatbridge tables (PostgreSQL)', () => {
  let db: ScratchDatabase;
  beforeAll(async () => {
    db = await createScratchDatabase(DATABASE_URL!);
    const store = await openStore({ kind: 'postgres', databaseUrl: db.url, poolSize: 2 });
    // Dead rows: endpoints created and deleted, as a benchmark run leaves them.
    for (let i = 0; i < 20; i++) await store.create(`gone-${i}`, hashToken(`t${i}`), initialRecord());
    for (let i = 0; i < 20; i++) await store.delete(`gone-${i}`);
    await store.close();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('when asked for its tables and one that does not exist, then it vacuums and analyses the ones there and skips the other', async () => {
    const done = await vacuumTables(db.url, [...chatbridgeTables(ROOT), 'no_such_table']);
    expect(done).toMatchObject({ tables: ['endpoint_events', 'endpoints', 'outbox', 'rate_limits'] });
    const stats = await withClient(db.url, (c) =>
      c.query<{ relname: string; vacuumed: boolean; analysed: boolean; dead: string }>(
        `SELECT relname, last_vacuum IS NOT NULL AS vacuumed, last_analyze IS NOT NULL AS analysed, n_dead_tup AS dead
         FROM pg_stat_user_tables WHERE relname = ANY($1) ORDER BY relname`,
        [chatbridgeTables(ROOT)],
      ),
    );
    expect(stats.rows.map((r) => [r.relname, r.vacuumed, r.analysed])).toEqual([
      ['endpoint_events', true, true],
      ['endpoints', true, true],
      ['outbox', true, true],
      ['rate_limits', true, true],
    ]);
    expect(stats.rows.find((r) => r.relname === 'endpoints')!.dead).toBe('0');
  });
});
