// Retention: read messages past their age are pruned in bounded batches that yield to the event loop
// between them, so the service answers while 100,000 go; unread messages are never pruned.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { MESSAGE_RETENTION } from '../../src/domain/messageQueue.ts';
import { PostgresEndpointStore } from '../../src/store/postgres/store.ts';
import { SqliteEndpointStore } from '../../src/store/sqlite/store.ts';
import { startTestServer, type TestServer } from '../../src/testing.ts';
import { createScratchDatabase, type ScratchDatabase } from '../store/pgScratch.ts';

const BASE_URL = process.env.DATABASE_URL;
const SEEDED = 100_000;
const old = Date.now() - MESSAGE_RETENTION.maxAgeMs - 60_000;

interface Target {
  server: TestServer;
  /** Adds `count` read messages accepted long ago, and one unread one as old, to endpoint `id`. */
  seed(id: string, count: number): Promise<void>;
  countMessages(id: string): Promise<number>;
  close(): Promise<void>;
}

async function sqliteTarget(): Promise<Target> {
  const file = join(mkdtempSync(join(tmpdir(), 'chatbridge-retention-')), 'store.sqlite');
  const server = await startTestServer({ store: new SqliteEndpointStore(file) });
  const db = new DatabaseSync(file);
  return {
    server,
    async seed(id, count) {
      db.exec(`WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ${count})
               INSERT INTO messages (endpoint_id, number, sender, sender_channel, message, unread, created_at)
               SELECT '${id}', x, 'chat_c', 'c-channel-1', '{}', 0, ${old} FROM n;
               INSERT INTO messages (endpoint_id, number, sender, sender_channel, message, unread, created_at)
               VALUES ('${id}', ${count + 1}, 'chat_c', 'c-channel-1', '{}', 8, ${old});`);
    },
    async countMessages(id) {
      return (db.prepare('SELECT count(*) AS n FROM messages WHERE endpoint_id = ?').get(id) as { n: number }).n;
    },
    async close() {
      db.close();
      await server.close();
    },
  };
}

async function postgresTarget(databases: ScratchDatabase[]): Promise<Target> {
  const scratch = await createScratchDatabase(BASE_URL!);
  databases.push(scratch);
  const server = await startTestServer({ store: await PostgresEndpointStore.open({ connectionString: scratch.url }) });
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  return {
    server,
    async seed(id, count) {
      await client.query(
        `INSERT INTO messages (endpoint_id, number, sender, sender_channel, message, unread, created_at)
         SELECT $1, x, 'chat_c', 'c-channel-1', '{}', 0, $3::bigint FROM generate_series(1, $2::int) x
         UNION ALL SELECT $1, $2::int + 1, 'chat_c', 'c-channel-1', '{}', 8, $3::bigint`,
        [id, count, old],
      );
    },
    async countMessages(id) {
      return Number((await client.query('SELECT count(*) AS n FROM messages WHERE endpoint_id = $1', [id])).rows[0].n);
    },
    async close() {
      await client.end();
      await server.close();
    },
  };
}

const databases: ScratchDatabase[] = [];
afterAll(async () => {
  await Promise.all(databases.map((d) => d.drop()));
});

// SQLite runs its statements on the event loop, so the sweep's batching is what keeps the service
// answering: it gets the full 100,000. PostgreSQL's statements run in the database (the loop only
// waits for them); a quarter keeps the test short and still takes several batches.
const targets: [string, number, () => Promise<Target>][] = [['sqlite', SEEDED, sqliteTarget]];
if (BASE_URL) targets.push(['postgres', SEEDED / 4, () => postgresTarget(databases)]);

describe.each(targets)('message retention (%s)', (_name, seeded, open) => {
  it(`when ${seeded} read messages pass their age, then the sweep deletes them while /-/live is answered, and keeps the unread one`, async () => {
    const target = await open();
    try {
      await target.server.provision('retained');
      await target.seed('retained', seeded);
      // Event-loop turns taken while the sweep runs: a sweep that held the loop throughout would allow none.
      let turns = 0;
      let sweeping = true;
      const count = () => {
        turns++;
        if (sweeping) setImmediate(count);
      };
      setImmediate(count);
      let liveDuringSweep = false;
      const sweep = target.server.relay.sweepRetention().finally(() => (sweeping = false));
      const live = await fetch(`${target.server.url}/-/live`);
      liveDuringSweep = sweeping;
      await sweep;
      expect(live.status).toBe(200);
      expect(liveDuringSweep).toBe(true);
      expect(turns).toBeGreaterThan(seeded / 5_000);
      expect(await target.countMessages('retained')).toBe(1);
    } finally {
      await target.close();
    }
  }, 60_000);
});
