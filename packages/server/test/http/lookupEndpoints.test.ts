import { describe, expect, it } from 'vitest';
import { createChatbridgeClient } from '@chatbridge/client';
import { failure, raw, useServer } from './harness.ts';

const h = useServer();

describe('lookupEndpoints', () => {
  it('when two endpoints bridge a channel, then lookup names both with the bridge it stands at, in endpoint order', async () => {
    const first = await h.endpoint('look');
    const second = await h.endpoint('look');
    await h.client.updateEndpoint(first.id, first.token, { channel_chat_b: 'b-shared-1' });
    await h.client.updateEndpoint(second.id, second.token, { channel_chat_b: 'b-other-11' });
    await h.client.updateEndpoint(second.id, second.token, { channel_chat_b: 'b-shared-1' });

    expect(await h.client.lookup('chat_b', 'b-shared-1')).toEqual({
      matches: [
        { endpoint: first.id, bridge: 0 },
        { endpoint: second.id, bridge: 1 },
      ],
      truncated: false,
    });
    // The same ID on another platform is another channel.
    expect(await h.client.lookup('chat_a', 'b-shared-1')).toEqual({ matches: [], truncated: false });
  });

  it('when a bridge is removed or overwritten, then lookup follows at once', async () => {
    const { id, token } = await h.endpoint('look');
    await h.client.updateEndpoint(id, token, { channel_chat_c: 'c-moving-1' });
    await h.client.updateEndpoint(id, token, { channel_chat_c: 'c-moving-2' });
    await h.client.remove(id, token, { bridge: 0 });
    expect(await h.client.lookup('chat_c', 'c-moving-1')).toEqual({ matches: [], truncated: false });
    expect(await h.client.lookup('chat_c', 'c-moving-2')).toEqual({ matches: [{ endpoint: id, bridge: 0 }], truncated: false });
    await h.client.updateEndpoint(id, token, { index: 0, channel_chat_c: 'c-moving-3' });
    expect((await h.client.lookup('chat_c', 'c-moving-2')).matches).toEqual([]);
    expect((await h.client.lookup('chat_c', 'c-moving-3')).matches).toEqual([{ endpoint: id, bridge: 0 }]);
  });

  it('when an endpoint is deleted, then lookup no longer names it', async () => {
    const { id, token } = await h.endpoint('look');
    await h.client.updateEndpoint(id, token, { channel_chat_d: 'd-deleted-1' });
    await h.client.deleteEndpoint(id);
    expect((await h.client.lookup('chat_d', 'd-deleted-1')).matches).toEqual([]);
  });

  it('when more than 100 endpoints bridge a channel, then the first 100 are listed and truncated is true', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 101; i++) {
      const { id, token } = await h.endpoint('many');
      await h.client.updateEndpoint(id, token, { channel_chat_d: 'd-crowded-1' });
      ids.push(id);
    }
    const found = await h.client.lookup('chat_d', 'd-crowded-1');
    expect(found.truncated).toBe(true);
    expect(found.matches.map((m) => m.endpoint)).toEqual([...ids].sort().slice(0, 100));
  });

  it('when GET /lookup is requested, then it is the lookup operation, not the record of an endpoint named lookup', async () => {
    const r = await raw(`${h.server.url}/lookup?platform=chat_a&channel=nothing-here`, {
      headers: { authorization: `Bearer ${h.server.adminToken}` },
    });
    expect([r.status, r.body]).toEqual([200, { matches: [], truncated: false }]);
  });

  it('when neither a bot key nor the admin token is presented, or a wrong one, then 401 with a Bearer challenge', async () => {
    const missing = await raw(`${h.server.url}/lookup?platform=chat_a&channel=a-1`);
    const wrong = await raw(`${h.server.url}/lookup?platform=chat_a&channel=a-1`, {
      headers: { authorization: 'Bearer not-the-admin-token' },
    });
    for (const r of [missing, wrong]) {
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe('Bearer realm="chatbridge-admin"');
      expect(r.body).toMatchObject({
        type: 'https://chatbridge.dev/problems#unauthorized',
        detail: 'The bot key or admin token is missing or wrong.',
      });
    }
    const client = createChatbridgeClient({ baseUrl: h.server.url, adminToken: 'not-the-admin-token' });
    expect((await failure(client.lookup('chat_a', 'a-1'))).status).toBe(401);
  });

  it('when platform is unknown, channel missing or too long, or an unknown parameter is sent, then 400 naming each', async () => {
    const auth = { headers: { authorization: `Bearer ${h.server.adminToken}` } };
    const bad = await raw(`${h.server.url}/lookup?platform=chat_z&channel=${'x'.repeat(151)}&colour=blue`, auth);
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { parameter: string }) => e.parameter).sort()).toEqual(['channel', 'colour', 'platform']);
    const missing = await raw(`${h.server.url}/lookup?platform=chat_a`, auth);
    expect(missing.status).toBe(400);
    expect(missing.body.errors.map((e: { parameter: string }) => e.parameter)).toEqual(['channel']);
  });
});
