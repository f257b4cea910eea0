// Resuming the stream of all changes (GET /events) after changes that another read of the same
// position has already seen: the resumed stream gets every change made while it was away, at once,
// without waiting for a later change or a heartbeat. On SQLite always; on PostgreSQL when
// DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresEndpointStore } from '../../src/store/postgres/store.ts';
import { startTestServer, type TestServer } from '../../src/testing.ts';
import { openSse, type SseBlock, type SseReader } from '../sseBlocks.ts';
import { createScratchDatabase, type ScratchDatabase } from '../store/pgScratch.ts';

const BASE_URL = process.env.DATABASE_URL;

// A heartbeat longer than the test: the stream has nothing but changes and its first read to wake it.
const events = { heartbeatMs: 600_000 };

async function openAll(server: TestServer, headers: Record<string, string> = {}): Promise<SseReader> {
  const stream = await openSse(`${server.url}/events`, { authorization: `Bearer ${server.adminToken}`, ...headers });
  expect(stream.response.status).toBe(200);
  expect((await stream.next())?.retry).toBe(2000);
  return stream;
}

const blacklistOf = (block: SseBlock | undefined) =>
  (JSON.parse(block!.data!) as { record: { config: { blacklist: string[] } } }).record.config.blacklist.join(',');

function resumeSuite(start: () => Promise<TestServer>) {
  let server: TestServer;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(() => server?.close());

  it('when a client resumes at a position whose next change another stream already read, then it gets every change made since, at once', async () => {
    const token = await server.provision('resume-1');
    const update = async (word: string) =>
      expect((await fetch(`${server.url}/update/resume-1?token=${token}&blacklist=${word}`, { method: 'POST' })).status).toBe(200);
    const first = await openAll(server);
    const start = await first.next();
    expect(start?.event).toBe('reset');
    // The first stream reads the change after its start position; that read stays in memory.
    await update('a');
    expect(blacklistOf(await first.next())).toBe('a');
    first.close();
    // Two more changes while no stream of all changes is open.
    await update('b');
    await update('c');

    const resumed = await openAll(server, { 'last-event-id': start!.id! });
    const seen = [await resumed.next(), await resumed.next(), await resumed.next()];
    resumed.close();
    expect(seen.map((block) => block?.event)).toEqual(['change', 'change', 'change']);
    expect(seen.map(blacklistOf)).toEqual(['a', 'a,b', 'a,b,c']);
  });
}

describe('streamAllEvents resumed after a shared read, SQLite', () => {
  resumeSuite(() => startTestServer({ events }));
});

describe.skipIf(!BASE_URL)('streamAllEvents resumed after a shared read, PostgreSQL', () => {
  let db: ScratchDatabase;
  afterAll(() => db?.drop());
  resumeSuite(async () => {
    db = await createScratchDatabase(BASE_URL!);
    return startTestServer({ store: await PostgresEndpointStore.open({ connectionString: db.url }), events });
  });
});
