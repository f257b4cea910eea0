// A 200 is a promise through a crash: the server is SIGKILLed in the middle of a burst of 200
// messages; after the restart every acknowledged message reaches the webhook and a polling bot, in
// number order, and a message sent again after the crash carries the same Idempotency-Key.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEndpoint } from '../src/admin/endpoints.ts';
import type { AppConfig } from '../src/config.ts';
import { openStore } from '../src/store/open.ts';
import { eventually } from './http/receiver.ts';
import { startServerProcess } from './processes.ts';
import { createScratchDatabase, type ScratchDatabase } from './store/pgScratch.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const scratch: ScratchDatabase[] = [];
afterAll(async () => {
  await Promise.all(scratch.map((d) => d.drop()));
});

type Under = { env: Record<string, string>; config: AppConfig['store'] };

const stores: [string, () => Promise<Under>][] = [
  [
    'sqlite',
    async () => {
      const path = join(mkdtempSync(join(tmpdir(), 'chatbridge-burst-crash-')), 'store.sqlite');
      return { env: { CHATBRIDGE_SQLITE_PATH: path }, config: { kind: 'sqlite', sqlitePath: path } };
    },
  ],
];
if (DATABASE_URL) {
  stores.push([
    'postgres',
    async () => {
      const db = await createScratchDatabase(DATABASE_URL);
      scratch.push(db);
      return {
        env: { CHATBRIDGE_STORE: 'postgres', DATABASE_URL: db.url },
        config: { kind: 'postgres', databaseUrl: db.url, poolSize: 2 },
      };
    },
  ]);
}

/** A webhook that records each post's content and Idempotency-Key. */
async function startHook() {
  const posts: { content: string; key: string }[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    posts.push({
      content: (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { content: string }).content,
      key: String(req.headers['idempotency-key']),
    });
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    posts,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/${'x'.repeat(40)}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const BURST = 200;

describe.each(stores)('a crash in the middle of a burst (%s)', (_name, open) => {
  it('when the server is SIGKILLed mid-burst, then after restart every acknowledged message reaches the webhook and a polling bot, in order', async () => {
    const under = await open();
    const store = await openStore(under.config);
    const token = (await createEndpoint(store, 'burst'))!.token;
    await store.close();
    const hook = await startHook();
    const env = {
      ...under.env,
      CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE: 'true',
      CHATBRIDGE_RATE_LIMIT_PER_ENDPOINT: '0',
      CHATBRIDGE_AUTH_FAILURES_PER_MINUTE: '0',
    };
    const q = (params: Record<string, string>) => new URLSearchParams({ token, ...params }).toString();
    const first = await startServerProcess(env);
    try {
      const setup = await fetch(
        `${first.url}/update/burst?${q({ channel_chat_a: 'a-channel-1', webhook_chat_a: hook.url, channel_chat_c: 'c-channel-1', channel_chat_d: 'd-channel-1', selfuse: 'true' })}`,
        { method: 'POST' },
      );
      expect(setup.status).toBe(200);
      // Acknowledged messages, by number.
      const acknowledged = new Map<number, string>();
      for (let i = 1; i <= BURST && acknowledged.size < BURST / 2; i++) {
        const content = `m${i}`;
        const r = await fetch(
          `${first.url}/update/burst?${q({ sender: 'chat_c', sender_channel: 'c-channel-1', message_content: content, trigger: 'true' })}`,
          { method: 'POST' },
        );
        if (r.status === 200) acknowledged.set(Number(r.headers.get('chatbridge-message-number')), content);
      }
      first.child.kill('SIGKILL');
      await first.exited;
      const keysBefore = new Map(hook.posts.map((p) => [p.content, p.key]));

      const second = await startServerProcess(env);
      try {
        const expected = [...acknowledged.entries()].sort(([a], [b]) => a - b).map(([, c]) => c);
        // The webhook: each message once per key, in number order, the acknowledged ones all there.
        await eventually(() => expected.every((c) => hook.posts.some((p) => p.content === c)), 30_000);
        const firstDeliveries = hook.posts.filter((p, i) => hook.posts.findIndex((o) => o.key === p.key) === i).map((p) => p.content);
        expect(firstDeliveries.filter((c) => acknowledged.size > 0 && expected.includes(c))).toEqual(expected);
        // A message posted twice (sent, then the crash before it was recorded) went under one key.
        for (const p of hook.posts) expect(p.key).toBe(keysBefore.get(p.content) ?? hook.posts.find((o) => o.content === p.content)!.key);
        expect(new Set(hook.posts.map((p) => p.content)).size).toBe(new Set(hook.posts.map((p) => p.key)).size);

        // A bot that polls as chat_d walks every acknowledged message in order.
        const relayed: string[] = [];
        for (let guard = 0; guard < 4 * BURST; guard++) {
          const read = await fetch(`${second.url}/burst?${q({ platform: 'chat_d' })}`);
          const record = (await read.json()) as { meta: { trigger: boolean; read: { chat_d: boolean }; message: { content: string } } };
          if (!record.meta.trigger || record.meta.read.chat_d) break;
          relayed.push(record.meta.message.content);
          const n = read.headers.get('chatbridge-message-number')!;
          await fetch(`${second.url}/read/burst?${q({ platform: 'chat_d', message_number: n })}`, { method: 'POST' });
        }
        expect(relayed.filter((c) => expected.includes(c))).toEqual(expected);
      } finally {
        second.child.kill('SIGTERM');
        await second.exited;
      }
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
      await hook.close();
    }
  }, 90_000);
});
