// Two real server processes on one PostgreSQL database, as deployed behind a load balancer: writes
// through either are never lost, a write through one is read through the other at once, and the
// outbox delivers a message once although both instances' relays poll it. Runs when DATABASE_URL is
// set, in a scratch database of its own.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createChatbridgeClient, type ChatbridgeClient, type EndpointEvent } from '@chatbridge/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSse, type SseBlock } from './sseBlocks.ts';
import { createScratchDatabase, type ScratchDatabase } from './store/pgScratch.ts';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const ADMIN_TOKEN = 'multi-instance-admin-token-0123456789';
const START_TIMEOUT_MS = 20_000;

interface Instance {
  name: string;
  process: ChildProcess;
  url: string;
  client: ChatbridgeClient;
  /** Every line the process wrote, for diagnosing a failure. */
  output: string[];
}

function startInstance(name: string, databaseUrl: string): Promise<Instance> {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      CHATBRIDGE_STORE: 'postgres',
      DATABASE_URL: databaseUrl,
      CHATBRIDGE_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'info',
      CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE: 'true',
      // The append test sends 300 updates to one endpoint at once, far above the per-endpoint limit.
      CHATBRIDGE_RATE_LIMIT_PER_ENDPOINT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => output.push(`[stderr] ${line}`));
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`instance ${name} ${why}:\n${output.join('\n')}`));
    };
    const timer = setTimeout(() => fail(`did not log its URL within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    child.once('exit', (code, signal) => fail(`exited (code ${code}, signal ${signal}) before listening`));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output.push(line);
      let entry: { url?: unknown };
      try {
        entry = JSON.parse(line) as { url?: unknown };
      } catch {
        return;
      }
      if (typeof entry.url !== 'string') return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      const url = entry.url;
      resolve({ name, process: child, url, output, client: createChatbridgeClient({ baseUrl: url, adminToken: ADMIN_TOKEN }) });
    });
  });
}

/** SIGTERM, then SIGKILL if the process is still there after 5 s. */
async function stopInstance(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(killer);
}

/** Reads an endpoint's event stream in the background, collecting its events, until stopped. */
function follow(instance: Instance, id: string, token: string, lastEventId?: number) {
  const events: EndpointEvent[] = [];
  const controller = new AbortController();
  const reading = (async () => {
    try {
      const options = { signal: controller.signal, retryMs: 100, ...(lastEventId !== undefined && { lastEventId }) };
      for await (const event of instance.client.streamEndpointEvents(id, token, options)) events.push(event);
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
  })();
  return {
    events,
    ids: () => events.map((e) => e.id),
    async stop() {
      controller.abort();
      await reading;
    },
  };
}

async function waitFor(condition: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.runIf(!!process.env.DATABASE_URL)('two server instances on one PostgreSQL database', () => {
  let db: ScratchDatabase | undefined;
  let a: Instance;
  let b: Instance;
  const started: Instance[] = [];

  beforeAll(async () => {
    db = await createScratchDatabase(process.env.DATABASE_URL!);
    // Started together: both run the migrations at once on the empty database.
    const results = await Promise.allSettled([startInstance('A', db.url), startInstance('B', db.url)]);
    for (const r of results) if (r.status === 'fulfilled') started.push(r.value);
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    [a, b] = started as [Instance, Instance];
  }, 60_000);

  afterAll(async () => {
    await Promise.all(started.map((i) => stopInstance(i.process)));
    await db?.drop();
  }, 30_000);

  it('when both instances start on an empty database, then both serve and report ready', async () => {
    expect(a.url).not.toBe(b.url);
    for (const instance of [a, b]) expect((await instance.client.getReadiness()).ready).toBe(true);
  });

  it('when 300 appends arrive at once, alternating between the instances, then every one of them survives', async () => {
    const { id, token } = await a.client.createEndpoint('appends');
    const words = Array.from({ length: 300 }, (_, i) => `word-${i}`);
    const results = await Promise.allSettled(words.map((blacklist, i) => (i % 2 ? a : b).client.updateEndpoint(id, token, { blacklist })));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    for (const instance of [a, b]) {
      expect(new Set((await instance.client.getEndpoint(id, token)).config.blacklist)).toEqual(new Set(words));
    }
  });

  it('when an update is made through one instance, then the other reads it back at once', async () => {
    const { id, token } = await b.client.createEndpoint('read-your-writes');
    for (let i = 0; i < 20; i++) {
      const [writer, reader] = i % 2 ? [a, b] : [b, a];
      const written = await writer.client.updateEndpoint(id, token, { channel_chat_d: `channel-d-${i}`, beta: i % 2 === 1 });
      const read = await reader.client.getEndpoint(id, token);
      expect(read).toEqual(written);
      expect(read.config.channels.chat_d).toHaveLength(i + 1);
    }
  });

  it('when a client streams from one instance, then it sees every change made through the other, as committed and in order', async () => {
    const { id, token } = await a.client.createEndpoint('stream-across');
    const onB = follow(b, id, token);
    try {
      await waitFor(async () => onB.events.length >= 1, 'the first event');
      expect(onB.events[0]).toMatchObject({ id: 0, type: 'record' });
      const written = [];
      for (let i = 1; i <= 5; i++) written.push(await (i % 2 ? a : b).client.updateEndpoint(id, token, { blacklist: `w${i}` }));
      await waitFor(async () => onB.events.length >= 6, 'five change events on B');
      expect(onB.events.slice(1)).toEqual(written.map((record, i) => ({ id: i + 1, type: 'record', record, messageNumber: null })));
    } finally {
      await onB.stop();
    }
  });

  it('when a client reconnects to the other instance with Last-Event-ID, then it gets exactly the changes it missed, then live ones', async () => {
    const { id, token } = await a.client.createEndpoint('stream-resume');
    const first = follow(b, id, token);
    await waitFor(async () => first.ids().includes(0), 'the first event on B');
    await a.client.updateEndpoint(id, token, { blacklist: 'seen' });
    await waitFor(async () => first.ids().includes(1), 'the change on B');
    await first.stop();
    const lastSeen = first.events.at(-1)!.id;
    expect(lastSeen).toBe(1);

    const missed = [];
    for (let i = 0; i < 3; i++) missed.push(await b.client.updateEndpoint(id, token, { blacklist: `missed-${i}` }));
    const resumed = follow(a, id, token, lastSeen);
    try {
      await waitFor(async () => resumed.events.length >= 3, 'the replay on A');
      const live = await b.client.updateEndpoint(id, token, { blacklist: 'live' });
      await waitFor(async () => resumed.events.length >= 4, 'the live change on A');
      expect(resumed.events).toEqual([...missed, live].map((record, i) => ({ id: 2 + i, type: 'record', record, messageNumber: null })));
    } finally {
      await resumed.stop();
    }
  });

  it('when an instance shuts down under a stream, then the client reconnects to the other and continues without a gap', async () => {
    const c = await startInstance('C', db!.url);
    started.push(c);
    const { id, token } = await c.client.createEndpoint('stream-failover');
    // One client over both instances: C first, then B once C is gone, as behind a load balancer.
    let target = c;
    const failover = createChatbridgeClient({
      baseUrl: 'http://load-balancer.invalid',
      fetch: (request) => fetch(new Request(request.url.replace('http://load-balancer.invalid', target.url), request)),
    });
    const events: EndpointEvent[] = [];
    const controller = new AbortController();
    const reading = (async () => {
      try {
        for await (const e of failover.streamEndpointEvents(id, token, { signal: controller.signal, retryMs: 100 })) events.push(e);
      } catch (error) {
        if (!controller.signal.aborted) throw error;
      }
    })();
    try {
      await waitFor(async () => events.length >= 1, 'the first event from C');
      await c.client.updateEndpoint(id, token, { blacklist: 'before' });
      await waitFor(async () => events.length >= 2, 'the change from C');
      target = b;
      await stopInstance(c.process);
      const after = await a.client.updateEndpoint(id, token, { blacklist: 'after' });
      await waitFor(async () => events.length >= 3, 'the change after failing over to B');
      expect(events.map((e) => [e.id, e.type])).toEqual([
        [0, 'record'],
        [1, 'record'],
        [2, 'record'],
      ]);
      expect(events[2]!.record).toEqual(after);
    } finally {
      controller.abort();
      await reading;
    }
  });

  it('when a stream of all changes follows one instance while both write at once, then it sees every change once, in commit order, and resumes on the other with no gap or duplicate', async () => {
    const ids = ['all-1', 'all-2', 'all-3'];
    const tokens = await Promise.all(ids.map(async (id) => (await a.client.createEndpoint(id)).token));
    const open = async (instance: Instance, lastEventId?: string) => {
      const stream = await openSse(`${instance.url}/events`, {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        ...(lastEventId && { 'last-event-id': lastEventId }),
      });
      expect(stream.response.status).toBe(200);
      expect((await stream.next())?.retry).toBe(2000);
      return stream;
    };
    const seen: SseBlock[] = [];
    const first = await open(b);
    expect((await first.next())?.event).toBe('reset'); // the stream starts at the newest position
    // 60 updates at once, alternating between the instances, 20 per endpoint, each appending a word.
    const writes = Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const via = i % 2 === 0 ? a : b;
        const at = i % 3;
        return via.client.updateEndpoint(ids[at]!, tokens[at]!, { blacklist: `w${i}` });
      }),
    );
    while (seen.length < 25) seen.push((await first.next(15_000))!);
    first.close();
    await writes;
    // Reconnected to the other instance, after the last event received.
    const second = await open(a, seen.at(-1)!.id);
    while (seen.length < 60) seen.push((await second.next(15_000))!);
    second.close();

    expect(seen.every((block) => block.event === 'change')).toBe(true);
    const positions = seen.map((block) => Number(block.id));
    for (let i = 1; i < positions.length; i++) expect(positions[i]).toBeGreaterThan(positions[i - 1]!);
    const data = seen.map(
      (block) => JSON.parse(block.data!) as { endpoint: string; version: number; record: { config: { blacklist: string[] } } },
    );
    for (const id of ids) {
      const mine = data.filter((d) => d.endpoint === id);
      // Each version once, in order, each with the record of its version (one more word each).
      expect(mine.map((d) => d.version)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      for (const d of mine) expect(d.record.config.blacklist).toHaveLength(d.version);
    }
  });

  describe('a pending self-user message', () => {
    let receiver: Server;
    const posts: { url: string; idempotencyKey: string | undefined; body: string }[] = [];

    beforeAll(async () => {
      receiver = createServer((req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        req.on('end', () => {
          if (req.method === 'POST')
            posts.push({ url: req.url ?? '', idempotencyKey: req.headers['idempotency-key'] as string | undefined, body });
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    });

    afterAll(async () => {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    });

    it('when a self-user message is pending while both instances relay, then its webhook is POSTed exactly once', async () => {
      const { port } = receiver.address() as AddressInfo;
      const hookPath = '/hook-a-'.padEnd(60, 'x');
      const webhook = `http://127.0.0.1:${port}${hookPath}`;
      const channelC = 'chat-c-channel-0001';
      const { id, token } = await a.client.createEndpoint('self-user');
      // Each list is empty, so the appended values stand at index 0: the chat_c channel bridges to
      // chat_a's channel 0 and its webhook 0.
      await a.client.updateEndpoint(id, token, {
        selfuse: true,
        channel_chat_a: '912345678901234500',
        webhook_chat_a: webhook,
        channel_chat_c: channelC,
      });

      await a.client.updateEndpoint(id, token, {
        sender: 'chat_c',
        sender_channel: channelC,
        message_content: 'hello from chat_c',
        trigger: true,
      });

      // The relay marks chat_a read after the 2xx; chat_c sent it and chat_b/chat_d have no
      // channels, so the message is then finished and the record idle again.
      await waitFor(
        async () => posts.length >= 1 && (await b.client.getEndpoint(id, token)).meta.trigger === false,
        'the delivery and the return to idle',
      );
      await new Promise((resolve) => setTimeout(resolve, 2000)); // room for a duplicate to show up
      expect(posts).toHaveLength(1);
      // The create asks the webhook to answer with the message it made (its ID names the copy).
      expect(posts[0]!.url).toBe(`${hookPath}?wait=true`);
      expect(posts[0]!.body).toContain('hello from chat_c');
    });
  });
});
