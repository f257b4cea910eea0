// No accepted message is lost: bursts faster than the slowest reader reach every platform, in order,
// once each, on both stores: through a slow webhook, a rate-limiting one, bots that poll, and the
// message log's catch-up listing.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Platform } from '../../src/domain/record.ts';
import { PostgresEndpointStore } from '../../src/store/postgres/store.ts';
import { startTestServer, type TestServer, type TestServerOptions } from '../../src/testing.ts';
import { createScratchDatabase, type ScratchDatabase } from '../store/pgScratch.ts';
import { eventually } from './receiver.ts';

const BASE_URL = process.env.DATABASE_URL;

/** A webhook receiver whose every answer is decided by `answer` (status, headers, delay). */
interface Hook {
  url: string;
  contents: string[];
  keys: string[];
  close(): Promise<void>;
}

type Answer = { status: number; headers?: Record<string, string>; delayMs?: number };

async function startHook(answer: (n: number) => Answer): Promise<Hook> {
  const contents: string[] = [];
  const keys: string[] = [];
  let requests = 0;
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const a = answer(++requests);
    if (a.delayMs) await new Promise((r) => setTimeout(r, a.delayMs));
    if (a.status < 300) {
      contents.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { content: string }).content);
      keys.push(String(req.headers['idempotency-key']));
    }
    res.writeHead(a.status, a.headers).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks/${'x'.repeat(40)}`,
    contents,
    keys,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** 5 posts per 2 s window, then 429 with Retry-After: 1, as chat platforms rate-limit webhooks. */
function rateLimited(): (n: number) => Answer {
  let windowStart = Date.now();
  let used = 0;
  return () => {
    if (Date.now() - windowStart >= 2000) [windowStart, used] = [Date.now(), 0];
    if (used >= 5) return { status: 429, headers: { 'retry-after': '1' } } as Answer;
    used++;
    return { status: 204, headers: { 'x-ratelimit-remaining': String(5 - used) } } as Answer;
  };
}

/**
 * 3 posts per window, and each answer says how many the window has left; the one that uses it up
 * says it ends 0.5 s later (`X-RateLimit-Reset-After`), as chat platforms announce their limits. A
 * post before then is refused with 429 and counted in `refused`.
 */
function announcingLimit(): { answer: (n: number) => Answer; refused: () => number } {
  let closedUntil = 0;
  let used = 0;
  let refused = 0;
  return {
    refused: () => refused,
    answer: (): Answer => {
      if (Date.now() < closedUntil) {
        refused++;
        return { status: 429, headers: { 'retry-after': '1' } };
      }
      used++;
      if (used < 3) return { status: 204, headers: { 'x-ratelimit-remaining': String(3 - used) } };
      used = 0;
      closedUntil = Date.now() + 500;
      return { status: 204, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset-after': '0.5' } };
    },
  };
}

const stores: [string, () => Promise<{ options: TestServerOptions; cleanup: () => Promise<void> }>][] = [
  ['sqlite', async () => ({ options: {}, cleanup: async () => {} })],
];
if (BASE_URL) {
  stores.push([
    'postgres',
    async () => {
      const db: ScratchDatabase = await createScratchDatabase(BASE_URL);
      return {
        options: { store: await PostgresEndpointStore.open({ connectionString: db.url }) },
        cleanup: () => db.drop(),
      };
    },
  ]);
}

const QUEUE_BOUND = 40;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(stores)('message log (%s)', (_name, open) => {
  let server: TestServer;
  let cleanup: () => Promise<void>;
  const hooks: Hook[] = [];
  let counter = 0;

  beforeAll(async () => {
    const opened = await open();
    cleanup = opened.cleanup;
    // A bound of 40 unread messages: the rule is the same at the default 1,000, reached 25 times sooner.
    server = await startTestServer({
      ...opened.options,
      allowPrivateWebhooks: true,
      relay: { pollMs: 50 },
      messageQueueLimits: { messages: QUEUE_BOUND, bytes: 1024 * 1024 },
    });
  });
  afterEach(async () => {
    await Promise.all(hooks.splice(0).map((h) => h.close()));
  });
  afterAll(async () => {
    await server?.close();
    await cleanup?.();
  });

  const call = async (
    method: string,
    path: string,
    query: Record<string, string | number | boolean>,
    headers: Record<string, string> = {},
  ) => {
    const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
    const res = await fetch(`${server.url}${path}?${qs}`, { method, headers });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
  };

  /** An endpoint bridging chat_a (a webhook, delivered by the service), chat_c and chat_d. */
  async function community(hookUrl?: string) {
    const id = `log-${++counter}`;
    const token = await server.provision(id);
    const bridge = {
      channel_chat_a: `a-channel-${counter}`,
      channel_chat_c: `c-channel-${counter}`,
      channel_chat_d: `d-channel-${counter}`,
      ...(hookUrl && { webhook_chat_a: hookUrl, selfuse: true }),
    };
    expect((await call('POST', `/update/${id}`, { token, ...bridge })).status).toBe(200);
    return { id, token };
  }

  const say = (id: string, token: string, content: string, sender: Platform = 'chat_c') =>
    call('POST', `/update/${id}`, {
      token,
      sender,
      sender_channel: `${sender.slice(-1)}-channel-${counter}`,
      message_author_name: 'Ada',
      message_content: content,
      trigger: true,
    });

  /** Posts `count` messages `gapMs` apart, each answered 200 before the next. */
  async function burst(id: string, token: string, count: number, gapMs: number, prefix = 'm') {
    const sent: string[] = [];
    for (let i = 1; i <= count; i++) {
      const r = await say(id, token, `${prefix}${i}`);
      expect(r.status).toBe(200);
      // The answer names the message just accepted, even while older ones are queued.
      expect(r.headers.get('chatbridge-message-number')).toBe(String(i));
      sent.push(`${prefix}${i}`);
      await sleep(gapMs);
    }
    return sent;
  }

  /** A bot's polling loop, unchanged from the one-message model: read, relay if unread, mark read with the number. */
  async function poll(
    read: () => Promise<{ headers: Headers; body: Record<string, any> }>,
    mark: (n: string) => Promise<unknown>,
    platform: Platform,
    until: number,
  ) {
    const relayed: string[] = [];
    const deadline = Date.now() + 20_000;
    while (relayed.length < until && Date.now() < deadline) {
      const { headers, body } = await read();
      if (body.meta.trigger && !body.meta.read[platform]) {
        relayed.push(body.meta.message.content);
        await mark(headers.get('chatbridge-message-number')!);
      } else await sleep(20);
    }
    return relayed;
  }

  /**
   * 10 messages 30 ms apart to an endpoint whose chat_a webhook answers as `answer` says; resolves
   * once the webhook has accepted 10 posts (and a little after, so that a post sent twice shows).
   */
  async function burstToHook(answer: (n: number) => Answer) {
    const hook = await startHook(answer);
    hooks.push(hook);
    const { id, token } = await community(hook.url);
    const sent = await burst(id, token, 10, 30);
    await eventually(() => hook.contents.length >= 10, 20_000);
    await sleep(200);
    return { hook, sent };
  }

  it('when 10 messages arrive 30 ms apart and the chat_a webhook answers in 300 ms, then it receives all 10, in order, once each', async () => {
    const { hook, sent } = await burstToHook(() => ({ status: 204, delayMs: 300 }));
    expect(hook.contents).toEqual(sent);
    expect(new Set(hook.keys).size).toBe(10);
  }, 30_000);

  it('when the chat_a webhook rate-limits (5 per 2 s, then 429 with Retry-After), then it still receives all 10, in order, once each', async () => {
    const { hook, sent } = await burstToHook(rateLimited());
    expect(hook.contents).toEqual(sent);
  }, 30_000);

  it('when the chat_a webhook announces its limit with each answer (3 per window, then X-RateLimit-Remaining: 0 and Reset-After), then the relay waits out each used-up window: all 10 arrive in order and no post is refused', async () => {
    const limit = announcingLimit();
    const { hook, sent } = await burstToHook(limit.answer);
    expect(hook.contents).toEqual(sent);
    expect(limit.refused()).toBe(0);
  }, 30_000);

  it('when bots poll while a burst arrives, then a bot key loop and a token loop with platform each relay all 10 in order, and listMessages lists the 10', async () => {
    const { id, token } = await community();
    const admin = await fetch(`${server.url}/admin/bots`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: `bot-d-${counter}`, platform: 'chat_d' }),
    });
    const { key } = (await admin.json()) as { key: string };
    const bearer = { authorization: `Bearer ${key}` };
    const sending = burst(id, token, 10, 30);
    const [viaKey, viaToken] = await Promise.all([
      poll(
        () => call('GET', `/${id}`, {}, bearer),
        (n) => call('POST', `/read/${id}`, { message_number: n }, bearer),
        'chat_d',
        10,
      ),
      poll(
        () => call('GET', `/${id}`, { token, platform: 'chat_a' }),
        (n) => call('POST', `/read/${id}`, { token, platform: 'chat_a', message_number: n }),
        'chat_a',
        10,
      ),
    ]);
    const sent = await sending;
    expect(viaKey).toEqual(sent);
    expect(viaToken).toEqual(sent);

    const listed = await call('GET', `/messages/${id}`, { token, after: 0 });
    expect(listed.status).toBe(200);
    expect(listed.body.messages.map((m: { number: number }) => m.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(listed.body.messages.map((m: { message: { content: string } }) => m.message.content)).toEqual(sent);
    expect(listed.body.newest).toBe(10);
    // chat_c sent them; chat_a and chat_d read them: read everywhere, and the record is idle.
    expect(listed.body.messages.every((m: { state: string }) => m.state === 'read')).toBe(true);
    expect((await call('GET', `/${id}`, { token })).body.meta.trigger).toBe(false);
  });

  it('when a bot was offline, then listMessages with its platform lists exactly what it has not read, oldest first', async () => {
    const { id, token } = await community();
    await burst(id, token, 4, 0);
    await call('POST', `/read/${id}`, { token, platform: 'chat_d', message_number: 2 });
    const missed = await call('GET', `/messages/${id}`, { token, platform: 'chat_d', limit: 2 });
    expect(missed.body.messages.map((m: { number: number }) => m.number)).toEqual([1, 3]);
    expect(missed.body.more).toBe(true);
    expect(missed.body.messages.every((m: { state: string }) => m.state === 'pending')).toBe(true);
    const rest = await call('GET', `/messages/${id}`, { token, platform: 'chat_d', after: 3 });
    expect(rest.body.messages.map((m: { number: number }) => m.number)).toEqual([4]);
    // getEndpoint seen by chat_d shows its oldest unread; by nobody in particular, the oldest anyone has not read.
    const seen = await call('GET', `/${id}`, { token, platform: 'chat_d' });
    expect([seen.headers.get('chatbridge-message-number'), seen.body.meta.message.content]).toEqual(['1', 'm1']);
  });

  it('when two messages from different senders arrive 1 ms apart, then both reach every other platform', async () => {
    const hook = await startHook(() => ({ status: 204 }));
    hooks.push(hook);
    const { id, token } = await community(hook.url);
    const [c, d] = await Promise.all([say(id, token, 'from c', 'chat_c'), sleep(1).then(() => say(id, token, 'from d', 'chat_d'))]);
    expect([c.status, d.status]).toEqual([200, 200]);
    await eventually(() => hook.contents.length >= 2, 10_000);
    expect(hook.contents.sort()).toEqual(['from c', 'from d']);
    const forC = await call('GET', `/messages/${id}`, { token, platform: 'chat_c' });
    const forD = await call('GET', `/messages/${id}`, { token, platform: 'chat_d' });
    expect(forC.body.messages.map((m: { message: { content: string } }) => m.message.content)).toEqual(['from d']);
    expect(forD.body.messages.map((m: { message: { content: string } }) => m.message.content)).toEqual(['from c']);
  });

  it('when the unread bound is reached, then the next message is 429 naming the bound with Retry-After, and every earlier one stays queued', async () => {
    const { id, token } = await community();
    const limit = QUEUE_BOUND;
    for (let start = 1; start <= limit; start += 10) {
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => say(id, token, `q${start + i}`)));
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    }
    const refused = await say(id, token, 'one too many');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.body.detail).toContain(`${limit} unread messages`);
    let after = 0;
    const numbers: number[] = [];
    for (;;) {
      const page = await call('GET', `/messages/${id}`, { token, after, limit: 25, platform: 'chat_d' });
      numbers.push(...page.body.messages.map((m: { number: number }) => m.number));
      if (!page.body.more) break;
      after = numbers[numbers.length - 1]!;
    }
    expect(numbers).toEqual(Array.from({ length: limit }, (_, i) => i + 1));
    // Once a platform has read one, there is room again.
    await call('POST', `/read/${id}`, { token, platform: 'chat_a', message_number: 1 });
    await call('POST', `/read/${id}`, { token, platform: 'chat_d', message_number: 1 });
    expect((await say(id, token, 'room again')).status).toBe(200);
  });
});
