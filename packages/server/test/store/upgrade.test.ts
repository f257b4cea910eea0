// A store made by an earlier release opens with this code and is migrated in place, its data intact.
// The fixtures are such stores (schema version 7), made through that release's HTTP API and dumped.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import type { EndpointStore } from '../../src/store/port.ts';
import { PostgresEndpointStore, loadMigrations } from '../../src/store/postgres/store.ts';
import { SqliteEndpointStore, sqliteMigrations } from '../../src/store/sqlite/store.ts';
import { createScratchDatabase, withClient } from './pgScratch.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

/** What the fixtures hold, read through the port; then a write, which needs every table the schema has. */
async function expectFixtureServed(store: EndpointStore): Promise<void> {
  expect(await store.endpoints.listIds(undefined, 10)).toEqual(['fixture-1', 'fixture-2', 'fixture-3', 'fixture-idle']);
  const one = (await store.endpoints.get('fixture-1'))!;
  expect(one.record.config.channels.chat_a).toEqual(['912345678901234500']);
  expect(one.state.queue.map((q) => q.n)).toEqual([1, 2]);
  expect((await store.messages.list('fixture-1', 0, 10)).map((m) => JSON.parse(m.message).content)).toEqual(['Hello one', 'Hello two']);
  expect(await store.endpoints.lookupChannel('chat_b', '22222', 10)).toEqual([{ endpoint: 'fixture-2', bridge: 0 }]);
  expect((await store.bots.list()).map((b) => [b.id, b.platform])).toEqual([['fixture-bot', 'chat_b']]);
  expect(await store.deliveries.count()).toBe(1);
  expect(await store.endpoints.countPending()).toBe(2);

  const idle = (await store.endpoints.get('fixture-idle'))!;
  const record = structuredClone(idle.record);
  record.config.blacklist.push('upgraded');
  expect(await store.endpoints.update('fixture-idle', (current) => ({ write: { record, state: current!.state }, result: true }))).toBe(
    true,
  );
  const events = await store.changes.eventsSince('fixture-idle', idle.version, 10);
  expect(events.map((e) => [e.version, e.record.config.blacklist])).toEqual([[idle.version + 1, ['upgraded']]]);
  const changes = await store.changes.changesSince(0, 100);
  expect(changes.entries.at(-1)).toMatchObject({ endpointId: 'fixture-idle', version: idle.version + 1 });
}

describe('a store made by schema version 7', () => {
  it('when a SQLite file of that release is opened, then it is migrated to the current schema and serves its data', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'chatbridge-upgrade-')), 'store.sqlite');
    const old = new DatabaseSync(file);
    old.exec(fixture('sqlite-v7.sql'));
    old.close();
    const store = new SqliteEndpointStore(file);
    try {
      await expectFixtureServed(store);
    } finally {
      await store.close();
    }
    const db = new DatabaseSync(file);
    expect((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version).toBe(sqliteMigrations().length);
    db.close();
  });

  it.runIf(!!DATABASE_URL)(
    'when a PostgreSQL database of that release is opened, then it is migrated to the current schema and serves its data',
    async () => {
      const db = await createScratchDatabase(DATABASE_URL!);
      try {
        await withClient(db.url, (c) => c.query(fixture('postgres-v7.sql')));
        const store = await PostgresEndpointStore.open({ connectionString: db.url, poolSize: 2 });
        try {
          await expectFixtureServed(store);
        } finally {
          await store.close();
        }
        const { rows } = await withClient(db.url, (c) =>
          c.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version'),
        );
        expect(rows.map((r) => r.version)).toEqual(loadMigrations().map((m) => m.version));
      } finally {
        await db.drop();
      }
    },
  );
});
