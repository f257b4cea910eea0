// Webhook queues under failure: a webhook down for two minutes gets every message in order once it
// recovers (on a clock the test moves), and two instances on PostgreSQL that take turns accepting one
// burst deliver it to each webhook in number order.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { PostgresEndpointStore } from '../../src/store/postgres/store.ts';
import { startTestServer, type TestServer, type TestServerOptions } from '../../src/testing.ts';
import { createScratchDatabase, type ScratchDatabase } from '../store/pgScratch.ts';
import { eventually } from './receiver.ts';

const BASE_URL = process.env.DATABASE_URL;

interface Hook {
  url: string;
  contents: string[];
  down: boolean;
  close(): Promise<void>;
}

async function startHook(): Promise<Hook> {
  const hook = { contents: [] as string[], down: false } as Hook;
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (hook.down) return void res.writeHead(503).end();
    hook.contents.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { content: string }).content);
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hook.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/${'x'.repeat(40)}`;
  hook.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return hook;
}

const servers: TestServer[] = [];
const hooks: Hook[] = [];
const databases: ScratchDatabase[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close().catch(() => undefined)));
  await Promise.all(hooks.splice(0).map((h) => h.close()));
});
afterAll(async () => {
  await Promise.all(databases.map((d) => d.drop()));
});

const post = (server: TestServer, path: string, query: Record<string, string | boolean>) =>
  fetch(`${server.url}${path}?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))}`, {
    method: 'POST',
  });

async function bridge(server: TestServer, id: string, hookUrl: string) {
  const token = await server.provision(id);
  const res = await post(server, `/update/${id}`, {
    token,
    channel_chat_a: 'a-channel-0001',
    webhook_chat_a: hookUrl,
    channel_chat_c: 'c-channel-0001',
    selfuse: true,
  });
  expect(res.status).toBe(200);
  return token;
}

const message = (token: string, content: string) => ({
  token,
  sender: 'chat_c',
  sender_channel: 'c-channel-0001',
  message_content: content,
  trigger: true,
});

const stores: [string, () => Promise<TestServerOptions>][] = [['sqlite', async () => ({})]];
if (BASE_URL) {
  stores.push([
    'postgres',
    async () => {
      const db = await createScratchDatabase(BASE_URL);
      databases.push(db);
      return { store: await PostgresEndpointStore.open({ connectionString: db.url }) };
    },
  ]);
}

describe.each(stores)('a webhook down for two minutes (%s)', (_name, open) => {
  it('when a webhook fails for two minutes and then recovers, then it receives every message, in order, once each', async () => {
    let now = Date.now();
    const server = await startTestServer({
      ...(await open()),
      allowPrivateWebhooks: true,
      clock: () => now,
      messageTtlMs: 600_000,
      relay: { pollMs: 60_000 },
    });
    servers.push(server);
    const hook = await startHook();
    hooks.push(hook);
    const token = await bridge(server, 'outage', hook.url);
    hook.down = true;
    const sent = Array.from({ length: 6 }, (_, i) => `m${i + 1}`);
    for (const content of sent) expect((await post(server, '/update/outage', message(token, content))).status).toBe(200);
    // Two minutes of failures, on the service's clock: each attempt is refused and retried later.
    for (let elapsed = 0; elapsed < 120_000; elapsed += 5_000) {
      now += 5_000;
      await server.relay.pass();
      await server.relay.settled();
    }
    expect(hook.contents).toEqual([]);
    expect(server.relay.stats.retried).toBeGreaterThan(0);
    hook.down = false;
    // Steps shorter than a delivery's lease (22 s), so an attempt under way is never claimed twice.
    for (let i = 0; i < 60 && hook.contents.length < sent.length; i++) {
      now += 5_000;
      await server.relay.pass();
      await server.relay.settled();
      await eventually(async () => {
        await server.relay.settled();
        return true;
      });
    }
    expect(hook.contents).toEqual(sent);
  });
});

describe('webhook queues across instances', () => {
  it.skipIf(!BASE_URL)(
    'when two PostgreSQL instances take turns accepting one burst, then each webhook receives it in number order',
    async () => {
      const db = await createScratchDatabase(BASE_URL!);
      databases.push(db);
      const open = () => PostgresEndpointStore.open({ connectionString: db.url });
      const one = await startTestServer({ store: await open(), allowPrivateWebhooks: true, relay: { pollMs: 20 } });
      const two = await startTestServer({ store: await open(), allowPrivateWebhooks: true, relay: { pollMs: 20 } });
      servers.push(one, two);
      const hook = await startHook();
      hooks.push(hook);
      const token = await bridge(one, 'shared', hook.url);
      const sent = Array.from({ length: 30 }, (_, i) => `m${i + 1}`);
      for (const [i, content] of sent.entries()) {
        expect((await post(i % 2 === 0 ? one : two, '/update/shared', message(token, content))).status).toBe(200);
      }
      await eventually(() => hook.contents.length >= sent.length, 20_000);
      expect(hook.contents).toEqual(sent);
    },
  );
});
