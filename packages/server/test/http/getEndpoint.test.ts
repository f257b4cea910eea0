import { describe, expect, it } from 'vitest';
import { failure, raw, useServer } from './harness.ts';

const h = useServer();

describe('getEndpoint', () => {
  it("when 300 reads of 30 endpoints arrive at once, then each answer is its own endpoint's record", async () => {
    // The responses of one turn are ended together (http/transport/endAtTurnEnd.ts): none may go to another request.
    const endpoints = await Promise.all(Array.from({ length: 30 }, () => h.endpoint('many')));
    await Promise.all(endpoints.map(({ id, token }, i) => h.client.updateEndpoint(id, token, { message_content: `content of ${i}` })));
    const reads = Array.from({ length: 300 }, (_, n) => n % 30);
    const answers = await Promise.all(reads.map((i) => h.client.getEndpoint(endpoints[i]!.id, endpoints[i]!.token)));
    answers.forEach((record, n) => expect(record.meta.message.content).toBe(`content of ${reads[n]}`));
  });

  it('when the token is right, then the full initial record is returned with the seed key spellings', async () => {
    const { id, token } = await h.endpoint();
    const record = await h.client.getEndpoint(id, token);
    expect(Object.keys(record.config).sort()).toEqual(['allowed-ids', 'blacklist', 'channels', 'isbeta', 'logs', 'self-user', 'webhooks']);
    expect(Object.keys(record.meta).sort()).toEqual(['message', 'read', 'sender', 'sender-channel', 'trigger']);
    expect(record.meta.message.embed).toEqual({
      title: 'None',
      description: 'None',
      footer: 'None',
      image: 'None',
      thumbnail: 'None',
      fields: [],
    });
    expect(record.meta.message).toMatchObject({ isReply: false, reply: { author: null, message: null }, attachments: [], content: null });
    expect(record.meta.read).toEqual({ chat_a: false, chat_b: false, chat_c: false, chat_d: false });
  });

  it('when the token is missing, wrong, foreign, or the endpoint does not exist, then 401 with one identical body', async () => {
    const mine = await h.endpoint();
    const other = await h.endpoint();
    const wrong = `cbt_${'x'.repeat(72)}`;
    const bodies = await Promise.all([
      raw(`${h.server.url}/${mine.id}`),
      raw(`${h.server.url}/${mine.id}?token=${wrong}`),
      raw(`${h.server.url}/${mine.id}?token=${other.token}`),
      raw(`${h.server.url}/no-such-endpoint?token=${mine.token}`),
    ]);
    for (const b of bodies) {
      expect(b.status).toBe(401);
      expect(b.type).toContain('application/problem+json');
      expect(b.headers.get('www-authenticate')).toBe('ApiKey realm="chatbridge", in="query", name="token"');
    }
    const withoutInstance = bodies.map(({ body: { instance: _i, ...rest } }) => rest);
    expect(new Set(withoutInstance.map((b) => JSON.stringify(b))).size).toBe(1);
    expect(withoutInstance[0]).toMatchObject({ status: 401, type: 'https://chatbridge.dev/problems#unauthorized' });
    expect(withoutInstance[0].message).toBe(withoutInstance[0].detail);
  });

  it.each(['has space', 'semi;colon', 'a'.repeat(65), 'dot.ted'])('when the endpoint ID is %j, then 400 naming endpoint', async (id) => {
    const { token } = await h.endpoint();
    const e = await failure(h.client.getEndpoint(id, token));
    expect(e.status).toBe(400);
    expect(e.problem.errors).toEqual([expect.objectContaining({ parameter: 'endpoint', in: 'path' })]);
  });

  it('when the token has the wrong length, then 400 naming token', async () => {
    const { id } = await h.endpoint();
    const e = await failure(h.client.getEndpoint(id, 'short'));
    expect(e.status).toBe(400);
    expect(e.problem.errors).toEqual([expect.objectContaining({ parameter: 'token' })]);
  });

  it('when an unknown query parameter is sent, then 400 naming it', async () => {
    const { id, token } = await h.endpoint();
    const r = await raw(`${h.server.url}/${id}?token=${token}&chanel_chat_a=1`);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([expect.objectContaining({ parameter: 'chanel_chat_a' })]);
  });

  it('when a path is not an operation, then 404 problem+json', async () => {
    const r = await raw(`${h.server.url}/a/b/c/d`);
    expect(r.status).toBe(404);
    expect(r.type).toContain('application/problem+json');
  });
});

// Production replies without validating responses, straight to node:http with a Content-Length the
// row keeps (http/respond.ts); the tests above validate every response, so this runs both ways.
describe.each([
  { validateResponses: true, path: 'validated responses' },
  { validateResponses: false, path: "production's direct reply" },
])('getEndpoint with $path', ({ validateResponses }) => {
  const p = useServer({ validateResponses });

  it('when the record holds multi-byte characters, then Content-Length counts its UTF-8 bytes, on the first read and on reads from memory', async () => {
    // A count of UTF-16 units would cut the body short.
    const { id, token } = await p.endpoint();
    const content = `héllo 👋 ${'ü'.repeat(40)} 漢字`;
    await p.client.updateEndpoint(id, token, { message_content: content });
    for (let read = 0; read < 3; read++) {
      const res = await fetch(`${p.server.url}/${id}?token=${token}`);
      const body = Buffer.from(await res.arrayBuffer());
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Number(res.headers.get('content-length'))).toBe(body.length);
      expect(JSON.parse(body.toString('utf8')).meta.message.content).toBe(content);
    }
  });
});
