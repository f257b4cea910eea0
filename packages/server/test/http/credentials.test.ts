// SECURITY.md's "Credentials" table, row by row (admin token, bot key, endpoint token: what each
// reads, writes and never sees), on SQLite and, when DATABASE_URL is set, on PostgreSQL. Each test
// that closes a finding of issue 41 names it ("finding N"); each of those fails on a server where a
// bot key acts on every endpoint with every right.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatbridgeClient, REDACTED_WEBHOOK as CLIENT_MARKER } from '@chatbridge/client';
import { BOT_KEYS_MAX_AGE_MS } from '../../src/bots/keyCache.ts';
import { REDACTED_WEBHOOK } from '../../src/domain/redaction.ts';
import { createLogger } from '../../src/logger.ts';
import { openStore } from '../../src/store/open.ts';
import type { EndpointStore } from '../../src/store/port.ts';
import { startTestServer, type TestServer } from '../../src/testing.ts';
import { openSse, type SseBlock, type SseReader } from '../sseBlocks.ts';
import { createScratchDatabase, type ScratchDatabase } from '../store/pgScratch.ts';
import { raw } from './harness.ts';

const DATABASE_URL = process.env.DATABASE_URL;
const FAILURES_PER_MINUTE = 10;
/** The suite's bot-key stream budget: above the 50 streams finding 3 opens, low enough to reach. */
const MAX_PER_BOT_KEY = 55;

type Platform = 'chat_a' | 'chat_b' | 'chat_c' | 'chat_d';

interface Backend {
  /** undefined: a scratch SQLite file. */
  store?: EndpointStore;
  drop?: () => Promise<void>;
}

function credentialsSuite(storeName: string, backend: () => Promise<Backend>) {
  describe(`Credentials (${storeName})`, () => {
    let server: TestServer;
    let b: Backend | undefined;
    const logLines: string[] = [];
    let counter = 0;
    const next = (prefix: string) => `${prefix}-${++counter}`;

    beforeAll(async () => {
      b = await backend();
      const sink = new Writable({
        write(chunk, _enc, done) {
          logLines.push(chunk.toString());
          done();
        },
      });
      server = await startTestServer({
        ...(b.store && { store: b.store }),
        logger: createLogger('info', sink),
        // Heartbeats far apart: a stream that ends, ends because something ended it.
        events: { heartbeatMs: 600_000, maxPerBotKey: MAX_PER_BOT_KEY },
        rateLimits: { authFailuresPerMinute: FAILURES_PER_MINUTE, perEndpointPerSecond: 0 },
      });
    });
    afterAll(async () => {
      await server?.close();
      await b?.drop?.();
    });

    const admin = () => createChatbridgeClient({ baseUrl: server.url, adminToken: server.adminToken });
    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
    const bot = (platform: Platform) => admin().createBot(next(`bot-${platform}`), platform);
    const post = (path: string, headers: Record<string, string> = {}) => raw(`${server.url}${path}`, { method: 'POST', headers });
    const get = (path: string, headers: Record<string, string> = {}) => raw(`${server.url}${path}`, { headers });
    const webhook = (platform: 'chat_a' | 'chat_b', tag: string) =>
      `https://${platform.replace('_', '-')}.example.com/api/webhooks/${tag}/secret-of-${platform}-${'x'.repeat(20)}`;

    /**
     * A community bridging the given platforms at position 0 (channels, and webhooks for chat_a and
     * chat_b), set up with its token; chat_b's webhook was replaced once (the old URL is in its log).
     */
    async function community(platforms: Platform[]) {
      const id = next('community');
      const token = await server.provision(id);
      const channel = (p: Platform) => `${id}-${p}`;
      const hooks = { chat_a: webhook('chat_a', id), chat_b: webhook('chat_b', id), oldChatB: webhook('chat_b', `${id}-old`) };
      const query = new URLSearchParams({ token });
      for (const p of platforms) query.set(`channel_${p}`, channel(p));
      if (platforms.includes('chat_a')) query.set('webhook_chat_a', hooks.chat_a);
      if (platforms.includes('chat_b')) query.set('webhook_chat_b', hooks.oldChatB);
      expect((await post(`/update/${id}?${query}`)).status).toBe(200);
      if (platforms.includes('chat_b')) {
        const replace = new URLSearchParams({ token, index: '0', webhook_chat_b: hooks.chat_b });
        expect((await post(`/update/${id}?${replace}`)).status).toBe(200);
      }
      const record = async () => (await get(`/${id}?token=${token}`)).body;
      return { id, token, channel, hooks, record };
    }

    /** Reads blocks until `done` holds for one; returns every block read. */
    async function readUntil(stream: SseReader, done: (block: SseBlock) => boolean): Promise<SseBlock[]> {
      const blocks: SseBlock[] = [];
      for (;;) {
        const block = await stream.next(10_000);
        if (!block) return blocks;
        blocks.push(block);
        if (done(block)) return blocks;
      }
    }

    describe('row "bot key", reads', () => {
      it('finding 1: when a chat_a key asks for an endpoint without chat_a, then every operation answers as a wrong token does, and lookup and both streams never name it', async () => {
        const key = (await bot('chat_a')).key;
        const foreign = await community(['chat_b', 'chat_c']);
        const wrong = await get(`/${foreign.id}`, bearer(`cbk_${'w'.repeat(72)}`));
        expect(wrong.status).toBe(401);
        const before = await foreign.record();
        const attempts = [
          await get(`/${foreign.id}`, bearer(key)),
          await get(`/${next('missing')}`, bearer(key)),
          await post(`/update/${foreign.id}?sender=chat_a&trigger=true&message_content=intruder`, bearer(key)),
          await post(`/read/${foreign.id}`, bearer(key)),
          await post(`/remove/${foreign.id}?bridge=0`, bearer(key)),
          await get(`/events/${foreign.id}`, { ...bearer(key), accept: 'text/event-stream' }),
        ];
        const { instance: _w, ...wrongBody } = wrong.body;
        for (const answer of attempts) {
          expect(answer.status).toBe(401);
          const { instance: _i, ...body } = answer.body;
          expect(body).toEqual(wrongBody);
        }
        expect(await foreign.record()).toEqual(before);
        // Lookup: the admin token finds the channel; the key, which could relay into it, does not.
        const lookup = `/lookup?platform=chat_b&channel=${foreign.channel('chat_b')}`;
        expect((await get(lookup, { authorization: `Bearer ${server.adminToken}` })).body.matches).toEqual([
          { endpoint: foreign.id, bridge: 0 },
        ]);
        expect((await get(lookup, bearer(key))).body).toEqual({ matches: [], truncated: false });
        // The stream of all changes, replayed from its start: the foreign endpoint's changes are left out.
        const mine = await community(['chat_a', 'chat_b']);
        await post(`/update/${foreign.id}?token=${foreign.token}&blacklist=after`);
        await post(`/update/${mine.id}?token=${mine.token}&blacklist=marker-of-the-end`);
        const all = await openSse(`${server.url}/events?last_event_id=0`, bearer(key));
        try {
          const blocks = await readUntil(all, (b) => b.data?.includes('marker-of-the-end') === true);
          expect(blocks.some((b) => b.data?.includes(`"endpoint":"${mine.id}"`))).toBe(true);
          expect(blocks.filter((b) => b.data?.includes(foreign.id))).toEqual([]);
        } finally {
          all.close();
        }
      });
    });

    describe('row "bot key", never sees', () => {
      it('finding 1: when a chat_a key reads a bridged endpoint every way it can, then no chat_b webhook URL (current or replaced) is shown, and every position stays', async () => {
        const key = (await bot('chat_a')).key;
        const c = await community(['chat_a', 'chat_b', 'chat_c']);
        const secrets = [c.hooks.chat_b, c.hooks.oldChatB];
        const seen: string[] = [];
        const answer = async (a: Promise<{ status: number; body: unknown }>) => {
          const r = await a;
          expect(r.status).toBe(200);
          seen.push(JSON.stringify(r.body));
          return r.body as { config: { webhooks: Record<Platform, string[]> } };
        };
        expect(CLIENT_MARKER).toBe(REDACTED_WEBHOOK); // what the typed client tells bots to look for
        const read = await answer(get(`/${c.id}`, bearer(key)));
        expect(read.config.webhooks).toEqual({ chat_a: [c.hooks.chat_a], chat_b: [REDACTED_WEBHOOK], chat_c: [], chat_d: [] });
        await answer(
          post(`/update/${c.id}?sender=chat_a&sender_channel=${c.channel('chat_a')}&message_content=hi&trigger=true`, bearer(key)),
        );
        await post(`/update/${c.id}?token=${c.token}&sender=chat_c&message_content=back&trigger=true`);
        await answer(post(`/read/${c.id}`, bearer(key)));
        await answer(post(`/remove/${c.id}?log_chat_a=true`, bearer(key)));
        // Refusals name the parameter and echo nothing of the record.
        const refused = await post(`/update/${c.id}?webhook_chat_b=${encodeURIComponent(webhook('chat_b', 'mine'))}`, bearer(key));
        expect(refused.status).toBe(403);
        seen.push(JSON.stringify(refused.body));
        // The per-endpoint stream replayed from its first event, and the stream of all changes.
        await post(`/update/${c.id}?token=${c.token}&blacklist=last-change-of-c`);
        const own = await openSse(`${server.url}/events/${c.id}?last_event_id=0`, bearer(key));
        try {
          const blocks = await readUntil(own, (b) => b.data?.includes('last-change-of-c') === true);
          seen.push(...blocks.map((b) => b.text));
          expect(blocks.filter((b) => b.event === 'record').length).toBeGreaterThan(3);
          expect(blocks.filter((b) => b.event === 'record').every((b) => b.data!.includes(REDACTED_WEBHOOK))).toBe(true);
        } finally {
          own.close();
        }
        const all = await openSse(`${server.url}/events?last_event_id=0`, bearer(key));
        try {
          const blocks = await readUntil(all, (b) => {
            console.log(b.id, b.event, b.data?.slice(0, 60));
            return b.data?.includes('last-change-of-c') === true;
          });
          const ofC = blocks.filter((b) => b.data?.includes(`"endpoint":"${c.id}"`));
          expect(ofC.length).toBeGreaterThan(3);
          seen.push(...ofC.map((b) => b.text));
          expect(ofC.every((b) => b.data!.includes(REDACTED_WEBHOOK))).toBe(true);
        } finally {
          all.close();
        }
        const everything = seen.join('\n');
        for (const secret of secrets) expect(everything).not.toContain(secret);
        expect(everything).toContain(c.hooks.chat_a); // its own platform's webhook it sees
        // A key of a platform without webhooks sees neither; the token sees both.
        const c3 = (await bot('chat_c')).key;
        expect((await get(`/${c.id}`, bearer(c3))).body.config.webhooks).toEqual({
          chat_a: [REDACTED_WEBHOOK],
          chat_b: [REDACTED_WEBHOOK],
          chat_c: [],
          chat_d: [],
        });
        expect((await c.record()).config.webhooks.chat_b).toEqual([c.hooks.chat_b]);
      });
    });

    describe('row "bot key", writes', () => {
      const refusedUpdates: [string, string][] = [
        ['channel_chat_b', 'channel_chat_b=another-b'],
        ['log_chat_b', 'log_chat_b=log-b'],
        ['webhook_chat_b', `webhook_chat_b=${encodeURIComponent('https://attacker.example.com/api/webhooks/1/xxxxxxxxxxxxxxxxxxxxxxxx')}`],
        ['blacklist', 'blacklist=word'],
        ['allowed_ids', 'allowed_ids=12345'],
        ['selfuse', 'selfuse=true'],
        ['beta', 'beta=true'],
        ['message_content', 'message_content=no-sender'],
        ['channel_chat_b', 'channel_chat_b=another-b-channel&index=0&only_check=true'],
      ];
      it.each(refusedUpdates)(
        'finding 2: when a chat_a key sends %s on an endpoint where chat_a takes part, then 403 naming it and nothing changes',
        async (parameter, query) => {
          const key = (await bot('chat_a')).key;
          const c = await community(['chat_a', 'chat_b']);
          const before = await c.record();
          const answer = await post(`/update/${c.id}?${query}`, bearer(key));
          expect(answer.status).toBe(403);
          expect(answer.type).toContain('application/problem+json');
          expect(answer.body.errors).toContainEqual(expect.objectContaining({ parameter, in: 'query' }));
          expect(answer.body.detail).toContain(parameter);
          expect(await c.record()).toEqual(before);
        },
      );

      it("finding 2: when chat_b's message is pending, then a chat_a key can neither end it, rewrite it, nor take it over; it may start its own", async () => {
        const key = (await bot('chat_a')).key;
        const c = await community(['chat_a', 'chat_b']);
        await post(`/update/${c.id}?token=${c.token}&sender=chat_b&message_content=from-b&trigger=true`);
        const before = await c.record();
        for (const [parameter, query] of [
          ['trigger', 'trigger=false'],
          ['message_content', 'sender=chat_a&message_content=rewritten'],
          ['sender', 'sender=chat_a'],
        ] as const) {
          const answer = await post(`/update/${c.id}?${query}`, bearer(key));
          expect(answer.status).toBe(403);
          expect(answer.body.errors).toContainEqual(expect.objectContaining({ parameter }));
        }
        expect(await c.record()).toEqual(before);
        const own = await post(`/update/${c.id}?sender=chat_a&message_content=from-a&trigger=true`, bearer(key));
        expect(own.status).toBe(200);
        expect(own.body.meta).toMatchObject({ sender: 'chat_a', trigger: true, message: { content: 'from-a' } });
      });

      it.each([
        ['bridge', 'bridge=0'],
        ['blacklist', 'blacklist=spam'],
        ['allowed_ids', 'allowed_ids=12345'],
        ['log_chat_b', 'log_chat_b=true'],
      ])(
        'finding 2: when a chat_a key removes %s that is not only its own, then 403 naming it and nothing changes',
        async (parameter, query) => {
          const key = (await bot('chat_a')).key;
          const c = await community(['chat_a', 'chat_b']);
          await post(`/update/${c.id}?token=${c.token}&blacklist=spam&allowed_ids=12345&log_chat_b=log-b`);
          const before = await c.record();
          const answer = await post(`/remove/${c.id}?${query}`, bearer(key));
          expect(answer.status).toBe(403);
          expect(answer.body.errors).toContainEqual(expect.objectContaining({ parameter }));
          expect(await c.record()).toEqual(before);
        },
      );

      it("when a real bridge bot works on its own platform (README's bot host), then every step of it succeeds", async () => {
        const { key } = await bot('chat_b');
        const c = await community(['chat_a', 'chat_b', 'chat_c']);
        const client = createChatbridgeClient({ baseUrl: server.url, botKey: key });
        // A message arrives in its channel: which community bridges it, at which position?
        expect(await client.lookup('chat_b', c.channel('chat_b'))).toEqual({ matches: [{ endpoint: c.id, bridge: 0 }], truncated: false });
        // And a channel of another platform bridged with it (a reply relayed the other way).
        expect((await client.lookup('chat_a', c.channel('chat_a'))).matches).toEqual([{ endpoint: c.id, bridge: 0 }]);
        const all = await openSse(`${server.url}/events`, bearer(key));
        try {
          await readUntil(all, (b) => b.event === 'reset');
          const sent = await client.updateEndpoint(c.id, {
            sender: 'chat_b',
            sender_channel: c.channel('chat_b'),
            message_content: 'hi',
            message_author_name: 'someone',
            trigger: true,
          });
          expect(sent.meta).toMatchObject({ sender: 'chat_b', trigger: true });
          const change = (await readUntil(all, (b) => b.data?.includes(`"endpoint":"${c.id}"`) === true)).at(-1)!;
          expect(JSON.parse(change.data!)).toMatchObject({ endpoint: c.id, messageNumber: expect.any(Number) });
          // Another platform's message, relayed by this bot, then marked read for chat_b.
          await post(`/update/${c.id}?token=${c.token}&sender=chat_c&message_content=from-c&trigger=true`);
          const pending = (await readUntil(all, (b) => b.data?.includes('from-c') === true)).at(-1)!;
          const { messageNumber } = JSON.parse(pending.data!) as { messageNumber: number };
          expect((await client.markRead(c.id, { messageNumber })).meta.read.chat_b).toBe(true);
        } finally {
          all.close();
        }
        // Its own bridge settings: another channel and webhook, overwritten at a position, a log channel.
        await client.updateEndpoint(c.id, { channel_chat_b: `${c.id}-second`, webhook_chat_b: webhook('chat_b', `${c.id}-1`) });
        await client.updateEndpoint(c.id, { index: 1, channel_chat_b: `${c.id}-second-b`, webhook_chat_b: webhook('chat_b', `${c.id}-2`) });
        expect((await client.updateEndpoint(c.id, { log_chat_b: 'log-channel-b' })).config.logs.chat_b).toBe('log-channel-b');
        expect((await client.remove(c.id, { log_chat_b: true })).config.logs.chat_b).toBeNull();
        // Position 1 holds only chat_b's channel and webhook: it may un-bridge it.
        const removed = await client.remove(c.id, { bridge: 1 });
        expect(removed.config.channels.chat_b).toEqual([c.channel('chat_b')]);
        // It withdraws unread messages only while they are all its own: chat_c's is still unread.
        await client.updateEndpoint(c.id, { sender: 'chat_b', message_content: 'mine', trigger: true });
        const refused = await client.updateEndpoint(c.id, { trigger: false }).then(
          () => 200,
          (e: { status: number }) => e.status,
        );
        expect(refused).toBe(403);
        expect((await post(`/update/${c.id}?token=${c.token}&trigger=false`)).status).toBe(200);
        await client.updateEndpoint(c.id, { sender: 'chat_b', message_content: 'mine again', trigger: true });
        expect((await client.updateEndpoint(c.id, { trigger: false })).meta.trigger).toBe(false);
        const stream = await openSse(`${server.url}/events/${c.id}`, bearer(key));
        try {
          expect((await readUntil(stream, (b) => b.event !== undefined)).at(-1)?.event).toBe('record');
        } finally {
          stream.close();
        }
      });
    });

    describe('row "bot key", bounds', () => {
      it("finding 3: when a bot key has opened 50 streams of an endpoint, then the endpoint's token still opens its streams; the key's next past its own budget is refused", async () => {
        const { key } = await bot('chat_b');
        const c = await community(['chat_b']);
        const opened: SseReader[] = [];
        try {
          for (let i = 0; i < 50; i++) {
            const s = await openSse(`${server.url}/events/${c.id}`, bearer(key));
            opened.push(s);
            expect(s.response.status).toBe(200);
          }
          const byToken = await openSse(`${server.url}/events/${c.id}?token=${c.token}`);
          opened.push(byToken);
          expect(byToken.response.status).toBe(200);
          expect((await readUntil(byToken, (b) => b.event !== undefined)).at(-1)?.event).toBe('record');
          for (let i = 50; i < MAX_PER_BOT_KEY; i++) opened.push(await openSse(`${server.url}/events/${c.id}`, bearer(key)));
          const past = await get(`/events/${c.id}`, { ...bearer(key), accept: 'text/event-stream' });
          expect(past.status).toBe(429);
          expect(past.body.detail).toContain('bot key');
          const again = await openSse(`${server.url}/events/${c.id}?token=${c.token}`);
          opened.push(again);
          expect(again.response.status).toBe(200);
        } finally {
          for (const s of opened) s.close();
        }
      });

      it('finding 4: when a wrong key fails again and again from an address, then a valid key from that address is still answered', async () => {
        const { key } = await bot('chat_b');
        const c = await community(['chat_b']);
        const stale = `cbk_${'s'.repeat(72)}`;
        const statuses: number[] = [];
        for (let i = 0; i <= FAILURES_PER_MINUTE; i++) {
          statuses.push((await get(`/lookup?platform=chat_b&channel=x`, bearer(stale))).status);
          statuses.push((await get('/events', { ...bearer(stale), accept: 'text/event-stream' })).status);
        }
        expect(statuses).toContain(429); // the stale key is blocked...
        // ...and only it.
        expect((await get(`/lookup?platform=chat_b&channel=${c.channel('chat_b')}`, bearer(key))).status).toBe(200);
        expect((await get(`/${c.id}`, bearer(key))).status).toBe(200);
        const stream = await openSse(`${server.url}/events`, bearer(key));
        try {
          expect(stream.response.status).toBe(200);
        } finally {
          stream.close();
        }
        expect((await get(`/${c.id}?token=${c.token}`)).status).toBe(200);
      });
    });

    describe('row "admin token"', () => {
      it("writes: when the admin token bridges a platform's first channel, then that platform's key acts there from then on", async () => {
        const { key } = await bot('chat_d');
        const c = await community(['chat_a']);
        expect((await get(`/${c.id}`, bearer(key))).status).toBe(401);
        const joined = await post(`/update/${c.id}?channel_chat_d=${c.id}-d`, { authorization: `Bearer ${server.adminToken}` });
        expect(joined.status).toBe(200);
        expect(joined.body.config.webhooks.chat_a).toEqual([c.hooks.chat_a]); // the operator sees every webhook
        expect((await get(`/${c.id}`, bearer(key))).status).toBe(200);
        // As the token, it names the platform it marks read.
        const unnamed = await post(`/read/${c.id}`, { authorization: `Bearer ${server.adminToken}` });
        expect(unnamed.status).toBe(400);
        expect(unnamed.body.errors).toContainEqual(expect.objectContaining({ parameter: 'platform' }));
        expect((await post(`/read/${c.id}?platform=chat_a`, { authorization: `Bearer ${server.adminToken}` })).status).toBe(200);
      });

      it('reads: when the admin token follows every change and looks up a channel, then it sees every endpoint with its webhooks', async () => {
        const c = await community(['chat_b']);
        const lookup = await get(`/lookup?platform=chat_b&channel=${c.channel('chat_b')}`, {
          authorization: `Bearer ${server.adminToken}`,
        });
        expect(lookup.body.matches).toEqual([{ endpoint: c.id, bridge: 0 }]);
        expect((await get(`/${c.id}`, { authorization: `Bearer ${server.adminToken}` })).body.config.webhooks.chat_b).toEqual([
          c.hooks.chat_b,
        ]);
      });

      it('never sees: when the admin token is sent as X-Request-Id (finding 6), then it is neither echoed nor logged', async () => {
        const answer = await fetch(`${server.url}/-/live`, { headers: { 'x-request-id': server.adminToken } });
        expect(answer.headers.get('x-request-id')).not.toBe(server.adminToken);
        const long = 'a'.repeat(65);
        expect((await fetch(`${server.url}/-/live`, { headers: { 'x-request-id': long } })).headers.get('x-request-id')).not.toBe(long);
        expect((await fetch(`${server.url}/-/live`, { headers: { 'x-request-id': 'trace.id_1-2' } })).headers.get('x-request-id')).toBe(
          'trace.id_1-2',
        );
        await new Promise((resolve) => setTimeout(resolve, 50)); // log lines are written when responses close
        expect(logLines.join('')).not.toContain(server.adminToken);
      });
    });

    describe('row "endpoint token"', () => {
      it('reads and writes: when the token updates community-wide settings and reads, then it sees every platform and changes anything of its endpoint', async () => {
        const c = await community(['chat_a', 'chat_b']);
        const answer = await post(`/update/${c.id}?token=${c.token}&blacklist=w&selfuse=true&beta=true&channel_chat_c=${c.id}-c`);
        expect(answer.status).toBe(200);
        expect(answer.body.config.webhooks).toMatchObject({ chat_a: [c.hooks.chat_a], chat_b: [c.hooks.chat_b] });
        expect((await post(`/remove/${c.id}?token=${c.token}&bridge=0`)).status).toBe(200);
      });

      it('never sees: when a token asks for another endpoint, then 401', async () => {
        const [one, two] = [await community(['chat_a']), await community(['chat_a'])];
        expect((await get(`/${two.id}?token=${one.token}`)).status).toBe(401);
      });
    });

    it('finding 6: when lookup is sent a channel with a control character, then 400 naming channel', async () => {
      const { key } = await bot('chat_b');
      const answer = await get('/lookup?platform=chat_b&channel=a%00b', bearer(key));
      expect(answer.status).toBe(400);
      expect(answer.body.errors).toContainEqual(expect.objectContaining({ parameter: 'channel' }));
    });
  });
}

credentialsSuite('SQLite', async () => ({}));

describe.runIf(!!DATABASE_URL)('PostgreSQL', () => {
  describe('Credentials: revocation on every instance (PostgreSQL, two instances)', () => {
    let db: ScratchDatabase;
    let a: TestServer;
    let b: TestServer;
    beforeAll(async () => {
      db = await createScratchDatabase(DATABASE_URL!);
      const open = () => openStore({ kind: 'postgres', databaseUrl: db.url, poolSize: 4 });
      // Heartbeats far apart: a stream that ends, ends because the revocation reached its instance.
      a = await startTestServer({ store: await open(), events: { heartbeatMs: 600_000 } });
      b = await startTestServer({ store: await open(), events: { heartbeatMs: 600_000 } });
    });
    afterAll(async () => {
      await Promise.all([a?.close(), b?.close()]);
      await db?.drop();
    });

    /** Resolves with how long `stream` took to end (ms); rejects if it is still open after `withinMs`. */
    async function endsWithin(stream: SseReader, withinMs: number): Promise<number> {
      const started = Date.now();
      for (;;) {
        const left = withinMs - (Date.now() - started);
        if (left <= 0) throw new Error(`still open after ${withinMs} ms`);
        const block = await stream.next(left).catch(() => null);
        if (block === undefined) return Date.now() - started;
        if (block === null) throw new Error(`still open after ${withinMs} ms`);
      }
    }

    it('finding 5: when a bot key is rotated through instance A, then its streams on instance B end within the key copy age, with no change to wake them', async () => {
      const admin = createChatbridgeClient({ baseUrl: a.url, adminToken: a.adminToken });
      const token = await a.provision('revoked-key');
      await fetch(`${a.url}/update/revoked-key?token=${token}&channel_chat_b=22222`, { method: 'POST' });
      const { id, key } = await admin.createBot('rotated-on-a', 'chat_b');
      const auth = { authorization: `Bearer ${key}` };
      const one = await openSse(`${b.url}/events/revoked-key`, auth);
      const all = await openSse(`${b.url}/events`, auth);
      try {
        expect([one.response.status, all.response.status]).toEqual([200, 200]);
        await one.next(); // retry:
        await all.next();
        await admin.rotateBotKey(id);
        // The copy on B is at most the max age old, read again within a tenth of it; a second of slack for the read.
        const bound = BOT_KEYS_MAX_AGE_MS * 1.1 + 1000;
        const [tookOne, tookAll] = await Promise.all([endsWithin(one, bound), endsWithin(all, bound)]);
        expect(Math.max(tookOne, tookAll)).toBeLessThan(bound);
      } finally {
        one.close();
        all.close();
      }
    });

    it("when an endpoint's token is rotated through instance A, then the stream its old token opened on B ends", async () => {
      const admin = createChatbridgeClient({ baseUrl: a.url, adminToken: a.adminToken });
      const token = await a.provision('revoked-token');
      const stream = await openSse(`${b.url}/events/revoked-token?token=${token}`);
      try {
        expect(stream.response.status).toBe(200);
        await stream.next();
        await admin.rotateEndpointToken('revoked-token');
        await endsWithin(stream, 5000);
      } finally {
        stream.close();
      }
    });
  });

  credentialsSuite('PostgreSQL', async () => {
    const db = await createScratchDatabase(DATABASE_URL!);
    return {
      store: await openStore({ kind: 'postgres', databaseUrl: db.url, poolSize: 4 }),
      drop: () => db.drop(),
    };
  });
});
