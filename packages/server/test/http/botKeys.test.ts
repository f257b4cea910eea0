// Bot keys over HTTP: the admin operations, a key acting for its platform on every endpoint, and the
// security promises (no acting as another platform, no admin operation, rotation ends access and
// streams, never logged).
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createChatbridgeClient } from '@chatbridge/client';
import { createLogger } from '../../src/logger.ts';
import { RESERVED_ENDPOINT_IDS } from '../../src/domain/reservedIds.ts';
import { startTestServer } from '../../src/testing.ts';
import { failure, raw, useServer } from './harness.ts';

// Heartbeats (which also re-check the credential) far apart: a stream that ends, ends because the
// rotation or deletion ended it.
const h = useServer({ events: { heartbeatMs: 600_000 } });
let counter = 0;
const nextId = (prefix: string) => `${prefix}-${++counter}`;

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const adminHeaders = () => ({ authorization: `Bearer ${h.server.adminToken}`, 'content-type': 'application/json' });

type Platform = 'chat_a' | 'chat_b' | 'chat_c' | 'chat_d';

async function newBot(platform: Platform = 'chat_b') {
  return h.client.createBot(nextId('bot'), platform);
}

/** An endpoint where `platform` takes part (its token bridged a channel of it): a key of it acts there. */
async function joined(platform: Platform = 'chat_b') {
  const endpoint = await h.endpoint();
  await h.client.updateEndpoint(endpoint.id, endpoint.token, { [`channel_${platform}`]: nextId(`channel-${platform}`) });
  return endpoint;
}

/** Reads a response body to its end; resolves with what was read. */
async function readToEnd(response: Response): Promise<string> {
  let text = '';
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text;
    text += value;
  }
}

describe('bot admin operations', () => {
  it('when a bot is created, then 201 with its platform and a cbk_ key shown once; the list names it without any key', async () => {
    const id = nextId('bot');
    const created = await raw(`${h.server.url}/admin/bots`, {
      method: 'POST',
      headers: adminHeaders(),
      body: JSON.stringify({ id, platform: 'chat_b' }),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id, platform: 'chat_b' });
    expect(created.body.key).toMatch(/^cbk_[A-Za-z0-9_-]{72}$/);
    const listed = await raw(`${h.server.url}/admin/bots`, { headers: adminHeaders() });
    expect(listed.status).toBe(200);
    expect(listed.body.bots).toContainEqual({ id, platform: 'chat_b' });
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);
  });

  it('when a bot ID is taken, then 409 and the first key keeps working', async () => {
    const bot = await newBot();
    const again = await raw(`${h.server.url}/admin/bots`, {
      method: 'POST',
      headers: adminHeaders(),
      body: JSON.stringify({ id: bot.id, platform: 'chat_c' }),
    });
    expect(again).toMatchObject({ status: 409, type: expect.stringContaining('application/problem+json') });
    const { id } = await joined();
    expect((await raw(`${h.server.url}/${id}`, { headers: bearer(bot.key) })).status).toBe(200);
  });

  it('when an unknown bot is rotated or deleted, then 404', async () => {
    expect((await raw(`${h.server.url}/admin/bots/no-such-bot/key`, { method: 'POST', headers: adminHeaders() })).status).toBe(404);
    expect((await raw(`${h.server.url}/admin/bots/no-such-bot`, { method: 'DELETE', headers: adminHeaders() })).status).toBe(404);
  });

  it('when a bot is created with an unknown platform, then 400 naming it', async () => {
    const answer = await raw(`${h.server.url}/admin/bots`, {
      method: 'POST',
      headers: adminHeaders(),
      body: JSON.stringify({ id: nextId('bot'), platform: 'chat_z' }),
    });
    expect(answer.status).toBe(400);
    expect(JSON.stringify(answer.body.errors)).toContain('platform');
  });
});

describe('a bot key on the record operations', () => {
  it('when a chat_b key reads and updates two endpoints, then both answer as with their tokens, acting as chat_b', async () => {
    const bot = await newBot('chat_b');
    const [one, two] = [await joined('chat_b'), await joined('chat_b')];
    const client = createChatbridgeClient({ baseUrl: h.server.url, botKey: bot.key });
    for (const { id, token } of [one, two]) {
      await h.client.updateEndpoint(id, token, { channel_chat_a: '11111' }); // a platform to relay to
      const record = await client.updateEndpoint(id, { message_content: 'hi', sender: 'chat_b', trigger: true, channel_chat_b: '22222' });
      expect(record.meta.sender).toBe('chat_b');
      expect((await client.getEndpoint(id)).meta.message.content).toBe('hi');
    }
  });

  it('when a chat_b key sends as chat_a, then 403 forbidden and nothing is applied', async () => {
    const bot = await newBot('chat_b');
    const { id, token } = await joined('chat_b');
    const before = await h.client.getEndpoint(id, token);
    const answer = await raw(`${h.server.url}/update/${id}?sender=chat_a&trigger=true&message_content=spoof&blacklist=word`, {
      method: 'POST',
      headers: bearer(bot.key),
    });
    expect(answer).toMatchObject({ status: 403, type: expect.stringContaining('application/problem+json') });
    expect(answer.body.type).toBe('https://chatbridge.dev/problems#forbidden');
    expect(await h.client.getEndpoint(id, token)).toEqual(before);
  });

  it('when a chat_b key marks read, then chat_b is marked by default, and naming another platform is 403', async () => {
    const bot = await newBot('chat_b');
    const { id, token } = await h.endpoint();
    await h.client.updateEndpoint(id, token, { channel_chat_a: '11111', channel_chat_b: '22222', channel_chat_c: '33333' });
    await h.client.updateEndpoint(id, token, { sender: 'chat_c', trigger: true, message_content: 'm' });
    const forbidden = await raw(`${h.server.url}/read/${id}?platform=chat_c`, { method: 'POST', headers: bearer(bot.key) });
    expect(forbidden.status).toBe(403);
    const client = createChatbridgeClient({ baseUrl: h.server.url, botKey: bot.key });
    const record = await client.markRead(id);
    expect(record.meta.read.chat_b).toBe(true);
  });

  it('when markRead has a token and no platform, then 400 naming platform', async () => {
    const { id, token } = await h.endpoint();
    const answer = await raw(`${h.server.url}/read/${id}?token=${token}`, { method: 'POST' });
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toContainEqual(expect.objectContaining({ parameter: 'platform' }));
  });

  it('when a request carries both a token and a bot key, then 400 and nothing is applied', async () => {
    const bot = await newBot();
    const { id, token } = await h.endpoint();
    const before = await h.client.getEndpoint(id, token);
    const answer = await raw(`${h.server.url}/update/${id}?token=${token}&blacklist=word`, { method: 'POST', headers: bearer(bot.key) });
    expect(answer).toMatchObject({ status: 400, type: expect.stringContaining('application/problem+json') });
    expect(await h.client.getEndpoint(id, token)).toEqual(before);
  });

  it('when a bot key calls an admin operation, then 401', async () => {
    const bot = await newBot();
    const json = { ...bearer(bot.key), 'content-type': 'application/json' };
    expect(
      (await raw(`${h.server.url}/admin/endpoints`, { method: 'POST', headers: json, body: JSON.stringify({ id: nextId('ep') }) })).status,
    ).toBe(401);
    expect((await raw(`${h.server.url}/admin/endpoints`, { headers: json })).status).toBe(401);
    expect((await raw(`${h.server.url}/admin/bots`, { headers: json })).status).toBe(401);
    expect((await raw(`${h.server.url}/admin/bots/${bot.id}/key`, { method: 'POST', headers: json })).status).toBe(401);
  });

  it('when a wrong key is presented, on an existing or a missing endpoint, then the same 401 as a wrong token', async () => {
    const bot = await newBot();
    const { id } = await h.endpoint();
    const wrong = `${bot.key.slice(0, -1)}${bot.key.endsWith('A') ? 'B' : 'A'}`;
    const answers = [
      await raw(`${h.server.url}/${id}`, { headers: bearer(wrong) }),
      await raw(`${h.server.url}/no-such-endpoint`, { headers: bearer(bot.key) }),
    ];
    for (const a of answers) expect(a).toMatchObject({ status: 401, body: { type: 'https://chatbridge.dev/problems#unauthorized' } });
    const { instance: _a, ...first } = answers[0]!.body;
    const { instance: _b, ...second } = answers[1]!.body;
    expect(first).toEqual(second);
  });

  it('when a key is rotated, then the old key is refused, the new one works, and streams opened with the old one end', async () => {
    const bot = await newBot();
    const { id } = await joined();
    const stream = await fetch(`${h.server.url}/events/${id}`, { headers: { ...bearer(bot.key), accept: 'text/event-stream' } });
    expect(stream.status).toBe(200);
    const ended = readToEnd(stream);
    const rotated = await h.client.rotateBotKey(bot.id);
    expect(await ended).toContain('event: record'); // the body ends: the stream was closed by the server
    expect((await raw(`${h.server.url}/${id}`, { headers: bearer(bot.key) })).status).toBe(401);
    expect((await raw(`${h.server.url}/${id}`, { headers: bearer(rotated.key) })).status).toBe(200);
  });

  it('when a bot is deleted, then its key is refused and its streams end', async () => {
    const bot = await newBot();
    const { id } = await joined();
    const stream = await fetch(`${h.server.url}/events/${id}`, { headers: { ...bearer(bot.key), accept: 'text/event-stream' } });
    const ended = readToEnd(stream);
    await h.client.deleteBot(bot.id);
    await ended;
    expect((await raw(`${h.server.url}/update/${id}?blacklist=x`, { method: 'POST', headers: bearer(bot.key) })).status).toBe(401);
  });
});

describe('reserved endpoint IDs', () => {
  it.each([...RESERVED_ENDPOINT_IDS, 'LOOKUP', 'Events'])(
    'when createEndpoint is asked for %s, then 400 naming id and nothing is created',
    async (id) => {
      const error = await failure(h.client.createEndpoint(id));
      expect(error.status).toBe(400);
      expect(error.problem?.errors).toContainEqual(expect.objectContaining({ parameter: 'id' }));
      expect((await h.client.listEndpoints({ limit: 1000 })).ids).not.toContain(id);
    },
  );
});

describe('bot keys and the log', () => {
  it('when bot keys are created, used, refused and rotated, then no log line contains one', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const server = await startTestServer({ logger: createLogger('debug', sink) });
    try {
      const admin = createChatbridgeClient({ baseUrl: server.url, adminToken: server.adminToken });
      const { id, token } = await admin.createEndpoint('logged-bot-1');
      await admin.updateEndpoint(id, token, { channel_chat_b: '22222' });
      const bot = await admin.createBot('logged-bot', 'chat_b');
      const client = createChatbridgeClient({ baseUrl: server.url, botKey: bot.key });
      await client.updateEndpoint(id, { message_content: 'x', sender: 'chat_b' });
      await client.updateEndpoint(id, { sender: 'chat_a' }).catch(() => undefined); // 403
      await raw(`${server.url}/${id}?token=${token}`, { headers: bearer(bot.key) }); // 400: both
      await raw(`${server.url}/admin/endpoints`, { headers: bearer(bot.key) }); // 401
      await raw(`${server.url}/${id}`, { headers: { authorization: `Bearer ${bot.key}x` } }); // 401: unknown key
      const rotated = await admin.rotateBotKey(bot.id);
      await raw(`${server.url}/${id}`, { headers: bearer(bot.key) }); // 401: rotated
      await createChatbridgeClient({ baseUrl: server.url, botKey: rotated.key }).getEndpoint(id);
      // A key in the wrong place: as the request id, in the path (whole or split), as the token.
      await raw(`${server.url}/-/live`, { headers: { 'x-request-id': rotated.key } });
      await raw(`${server.url}/${rotated.key}`);
      await raw(`${server.url}/${rotated.key.slice(0, 30)}/${rotated.key.slice(30)}`);
      await raw(`${server.url}/${id}?token=${rotated.key}`);
      await new Promise((resolve) => setTimeout(resolve, 50)); // log lines are written when responses close
      const log = lines.join('');
      expect(lines.length).toBeGreaterThan(8);
      for (const secret of [bot.key, rotated.key, bot.key.slice(4, 40), rotated.key.slice(4, 40)]) expect(log).not.toContain(secret);
    } finally {
      await server.close();
    }
  });
});

describe('bot keys on lookup and removal', () => {
  it('when a bot looks up a channel with its key, then it finds the endpoint and bridge, whichever platform the channel is on', async () => {
    const bot = await newBot('chat_b');
    const { id, token } = await joined('chat_b');
    const channel = nextId('channel-a');
    expect((await raw(`${h.server.url}/update/${id}?token=${token}&channel_chat_a=${channel}`, { method: 'POST' })).status).toBe(200);
    const found = await raw(`${h.server.url}/lookup?platform=chat_a&channel=${channel}`, { headers: bearer(bot.key) });
    expect(found.status).toBe(200);
    expect(found.body).toEqual({ matches: [{ endpoint: id, bridge: 0 }], truncated: false });
    // The admin token opens it too; a wrong or rotated key does not.
    expect((await raw(`${h.server.url}/lookup?platform=chat_a&channel=${channel}`, { headers: adminHeaders() })).status).toBe(200);
    const rotated = await h.client.rotateBotKey(bot.id);
    expect((await raw(`${h.server.url}/lookup?platform=chat_a&channel=${channel}`, { headers: bearer(bot.key) })).status).toBe(401);
    expect((await raw(`${h.server.url}/lookup?platform=chat_a&channel=${channel}`, { headers: bearer(rotated.key) })).status).toBe(200);
  });

  it("when a bot removes its own log channel with its key, then the record changes; the blacklist is the community's (403); with a token as well, then 400", async () => {
    const bot = await newBot('chat_c');
    const { id, token } = await joined('chat_c');
    expect((await raw(`${h.server.url}/update/${id}?token=${token}&blacklist=spam,ham&log_chat_c=log-c`, { method: 'POST' })).status).toBe(
      200,
    );
    const both = await raw(`${h.server.url}/remove/${id}?token=${token}&log_chat_c=true`, { method: 'POST', headers: bearer(bot.key) });
    expect(both.status).toBe(400);
    const removed = await raw(`${h.server.url}/remove/${id}?log_chat_c=true`, { method: 'POST', headers: bearer(bot.key) });
    expect(removed.status).toBe(200);
    expect(removed.body.config.logs.chat_c).toBeNull();
    const community = await raw(`${h.server.url}/remove/${id}?blacklist=spam`, { method: 'POST', headers: bearer(bot.key) });
    expect(community.status).toBe(403);
    expect(community.body.errors).toContainEqual(expect.objectContaining({ parameter: 'blacklist' }));
    const wrong = await raw(`${h.server.url}/remove/${id}?blacklist=ham`, {
      method: 'POST',
      headers: bearer(`${bot.key.slice(0, -1)}${bot.key.endsWith('A') ? 'B' : 'A'}`),
    });
    expect(wrong.status).toBe(401);
  });
});

describe('a bot key on the stream of all changes', () => {
  it('when a bot follows GET /events with its key, then it sees a change of an endpoint where its platform takes part, with its message number; rotating the key ends the stream', async () => {
    const bot = await newBot('chat_c');
    const { id, token } = await joined('chat_c');
    const stream = await fetch(`${h.server.url}/events`, { headers: { ...bearer(bot.key), accept: 'text/event-stream' } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let body = '';
    /** Reads until `text` has arrived; the stream's own events pace the test, no clock. */
    const until = async (text: string | RegExp) => {
      while (typeof text === 'string' ? !body.includes(text) : !text.test(body)) {
        const { value, done } = await reader.read();
        if (done) return;
        body += value;
      }
    };
    await until('event: reset'); // placed at the newest position
    expect((await raw(`${h.server.url}/update/${id}?token=${token}&blacklist=from-the-token`, { method: 'POST' })).status).toBe(200);
    await until(new RegExp(`"endpoint":"${id}".*\\n\\n`));
    await h.client.rotateBotKey(bot.id);
    await until('a text the stream never sends'); // returns when the server ends the stream
    const change = body.split('\n\n').find((block) => block.includes('event: change') && block.includes(`"endpoint":"${id}"`));
    expect(change).toBeDefined();
    const data = JSON.parse(/^data: (.*)$/m.exec(change!)![1]!) as {
      endpoint: string;
      messageNumber: number | null;
      record: { config: { blacklist: string[] } };
    };
    expect(data).toMatchObject({ endpoint: id, messageNumber: null });
    expect(data.record.config.blacklist).toEqual(['from-the-token']);
  });

  it('when GET /events has a wrong key, then 401', async () => {
    const response = await raw(`${h.server.url}/events`, { headers: bearer('cbk_not-a-key-of-this-service') });
    expect(response.status).toBe(401);
  });
});
