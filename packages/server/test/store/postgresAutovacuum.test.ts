// The PostgreSQL store tells the operator at start-up when autovacuum is off: every update leaves dead
// rows that nothing else reclaims. The setting is the server's (it cannot be set per database), so
// the test reads it and expects the warning exactly when it is off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.ts';
import { createScratchDatabase, type ScratchDatabase, withClient } from './pgScratch.ts';

const DATABASE_URL = process.env.DATABASE_URL;

describe.runIf(!!DATABASE_URL)('PostgreSQL store: autovacuum check at open', () => {
  let db: ScratchDatabase;
  beforeAll(async () => {
    db = await createScratchDatabase(DATABASE_URL!);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('when the store opens, then it warns once if and only if autovacuum is off, naming it', async () => {
    const setting = await withClient(db.url, async (c) => (await c.query<{ autovacuum: string }>('SHOW autovacuum')).rows[0]!.autovacuum);
    const warnings: string[] = [];
    const store = await openStore({ kind: 'postgres', databaseUrl: db.url, poolSize: 1 }, { onWarning: (m) => warnings.push(m) });
    await store.close();
    expect(warnings).toHaveLength(setting === 'off' ? 1 : 0);
    for (const w of warnings) expect(w).toMatch(/autovacuum is off/);
  });
});
