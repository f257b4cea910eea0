// Bot keys on PostgreSQL with two instances: a key rotated through one stops working on the other
// within the documented bound (BOT_KEYS_MAX_AGE_MS), and the stream it opened there ends.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createChatbridgeClient } from '@chatbridge/client';
import { BOT_KEYS_MAX_AGE_MS } from '../../src/bots/keyCache.ts';
import { PostgresEndpointStore } from '../../src/store/postgres/store.ts';
import { startTestServer, type TestServer } from '../../src/testing.ts';
import { createScratchDatabase, type ScratchDatabase } from '../store/pgScratch.ts';
import { raw } from './harness.ts';

const BASE_URL = process.env.DATABASE_URL;

describe.skipIf(!BASE_URL)('bot keys across two instances on PostgreSQL', () => {
  let db: ScratchDatabase;
  let one: TestServer;
  let two: TestServer;
  beforeAll(async () => {
    db = await createScratchDatabase(BASE_URL!);
    one = await startTestServer({ store: await PostgresEndpointStore.open({ connectionString: db.url }) });
    two = await startTestServer({ store: await PostgresEndpointStore.open({ connectionString: db.url }) });
  });
  afterAll(async () => {
    vi.useRealTimers();
    await one?.close();
    await two?.close();
    await db?.drop();
  });

  it('when a key is rotated through one instance, then the other refuses it once its copy reaches the bound, and its stream ends', async () => {
    // Only Date is faked: the key copy's age follows it; the servers' own timers stay real.
    vi.useFakeTimers({ toFake: ['Date'] });
    const admin = createChatbridgeClient({ baseUrl: one.url, adminToken: one.adminToken });
    const token = await one.provision('shared');
    await admin.updateEndpoint('shared', token, { channel_chat_b: '22222' }); // chat_b takes part: its key acts there
    const bot = await admin.createBot('roaming-bot', 'chat_b');
    const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
    expect((await raw(`${two.url}/shared`, bearer(bot.key))).status).toBe(200);
    const stream = await fetch(`${two.url}/events/shared`, { headers: { ...bearer(bot.key).headers, accept: 'text/event-stream' } });
    expect(stream.status).toBe(200);

    const rotated = await admin.rotateBotKey(bot.id);
    expect((await raw(`${one.url}/shared`, bearer(bot.key))).status).toBe(401); // at once where it was rotated
    vi.setSystemTime(Date.now() + BOT_KEYS_MAX_AGE_MS);
    expect((await raw(`${two.url}/shared`, bearer(bot.key))).status).toBe(401);
    expect((await raw(`${two.url}/shared`, bearer(rotated.key))).status).toBe(200);
    // The stream there re-checks at a change of the endpoint (or its next heartbeat): a change ends it.
    await one.store.endpoints.update('shared', (current) => ({
      write: { record: { ...current!.record, config: { ...current!.record.config, isbeta: true } }, state: current!.state },
      result: undefined,
    }));
    const text = await stream.text();
    expect(text).toContain('event: record');
  });
});
