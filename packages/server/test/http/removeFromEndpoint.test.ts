import { beforeAll, describe, expect, it } from 'vitest';
import { messageNumberOf } from '@chatbridge/client';
import { failure, raw, useServer } from './harness.ts';

const h = useServer();
beforeAll(async () => {
  // Deliveries stay queued, so that what the removal drops from the outbox can be counted.
  await h.server.relay.stop();
});

const HOOK_A = (n: number) => `https://chat-a.example.com/api/webhooks/12345678901234567${n}/abcdefghijklmnopqrstuvwxyz`;
const HOOK_B = (n: number) => `https://chat-b.example.com/hooks/channel-b-${n}/0123456789abcdef0123456789abcdef`;

/** An endpoint with two bridges over chat_a and chat_b, each channel with its webhook. */
async function twoBridges() {
  const { id, token } = await h.endpoint('rm');
  for (const n of [0, 1]) {
    await h.client.updateEndpoint(id, token, {
      channel_chat_a: `a-channel-${n}`,
      webhook_chat_a: HOOK_A(n),
      channel_chat_b: `b-channel-${n}`,
      webhook_chat_b: HOOK_B(n),
    });
  }
  await h.client.updateEndpoint(id, token, {
    blacklist: 'Spam,scam',
    allowed_ids: '912345678901234567',
    log_chat_a: 'log-a-1',
    log_chat_b: 'log-b-1',
  });
  return { id, token };
}

const versionOf = async (id: string) => (await h.server.store.endpoints.get(id))!.version;

describe('removeFromEndpoint', () => {
  it('when a bridge, words, an ID and a log channel are removed, then all of it is applied in one committed change', async () => {
    const { id, token } = await twoBridges();
    const before = await versionOf(id);
    const record = await h.client.remove(id, token, { bridge: 0, blacklist: 'SPAM', allowed_ids: '912345678901234567', log_chat_b: true });
    expect(record.config).toMatchObject({
      channels: { chat_a: ['a-channel-1'], chat_b: ['b-channel-1'], chat_c: [], chat_d: [] },
      webhooks: { chat_a: [HOOK_A(1)], chat_b: [HOOK_B(1)], chat_c: [], chat_d: [] },
      blacklist: ['scam'],
      'allowed-ids': [],
      logs: { chat_a: 'log-a-1', chat_b: null, chat_c: null, chat_d: null },
    });
    expect(await h.client.getEndpoint(id, token)).toEqual(record);
    expect(await versionOf(id)).toBe(before + 1);
    expect((await h.server.store.changes.eventsSince(id, before, 10)).map((e) => e.version)).toEqual([before + 1]);
  });

  it('when what is removed is absent, then 200 with the record unchanged, and nothing is written', async () => {
    const { id, token } = await twoBridges();
    const before = await h.client.getEndpoint(id, token);
    const version = await versionOf(id);
    expect(await h.client.remove(id, token, { blacklist: 'absent', allowed_ids: '000000000000', log_chat_c: true })).toEqual(before);
    expect(await versionOf(id)).toBe(version);
  });

  it('when the bridge is out of range, then 400 naming it and nothing of the request is applied', async () => {
    const { id, token } = await twoBridges();
    const before = await h.client.getEndpoint(id, token);
    const error = await failure(h.client.remove(id, token, { bridge: 2, blacklist: 'spam' }));
    expect(error.status).toBe(400);
    expect(error.problem.errors).toEqual([expect.objectContaining({ parameter: 'bridge', in: 'query' })]);
    expect(await h.client.getEndpoint(id, token)).toEqual(before);
  });

  it('when log_chat_x is True (as Python bots write booleans), then removal clears it, while updateEndpoint still stores the text True', async () => {
    const { id, token } = await twoBridges();
    const updated = await raw(`${h.server.url}/update/${id}?token=${token}&log_chat_a=True&log_chat_b=FALSE`, { method: 'POST' });
    expect(updated.body.config.logs).toMatchObject({ chat_a: 'True', chat_b: 'FALSE' });
    const removed = await raw(`${h.server.url}/remove/${id}?token=${token}&log_chat_a=True&log_chat_b=FALSE`, { method: 'POST' });
    expect(removed.status).toBe(200);
    expect(removed.body.config.logs).toMatchObject({ chat_a: null, chat_b: 'FALSE' });
  });

  it('when a parameter is unknown, out of bounds or of the wrong type, then 400 naming each', async () => {
    const { id, token } = await twoBridges();
    const r = await raw(`${h.server.url}/remove/${id}?token=${token}&bridge=50&log_chat_a=yes&channel_chat_a=a-channel-0&allowed_ids=abc`, {
      method: 'POST',
    });
    expect(r.status).toBe(400);
    expect(r.body.errors.map((e: { parameter: string }) => e.parameter).sort()).toEqual([
      'allowed_ids',
      'bridge',
      'channel_chat_a',
      'log_chat_a',
    ]);
  });

  it('when the token is missing or another endpoint’s, then 401 and nothing changes', async () => {
    const { id, token } = await twoBridges();
    const other = await h.endpoint('rm');
    const before = await h.client.getEndpoint(id, token);
    expect((await failure(h.client.remove(id, other.token, { bridge: 0 }))).status).toBe(401);
    const missing = await raw(`${h.server.url}/remove/${id}?bridge=0`, { method: 'POST' });
    expect([missing.status, missing.headers.get('www-authenticate')]).toEqual([401, 'ApiKey realm="chatbridge", in="query", name="token"']);
    expect(await h.client.getEndpoint(id, token)).toEqual(before);
  });

  it('when a message is pending, then the answer carries its number, and its queued delivery to a removed webhook is dropped', async () => {
    const { id, token } = await twoBridges();
    await h.client.updateEndpoint(id, token, { selfuse: true });
    await h.client.updateEndpoint(id, token, { sender: 'chat_a', sender_channel: 'a-channel-1', message_content: 'hello', trigger: true });
    const queued = () => collect(id);
    expect(await queued()).toEqual([{ platform: 'chat_b', url: HOOK_B(1) }]);
    // Removing the other bridge keeps the delivery: its webhook is still there (now at position 0).
    const kept = await h.client.remove(id, token, { bridge: 0 });
    expect(messageNumberOf(kept)).toBe(1);
    expect(await queued()).toEqual([{ platform: 'chat_b', url: HOOK_B(1) }]);
    await h.client.remove(id, token, { bridge: 0 });
    expect(await queued()).toEqual([]);
  });
});

/** The endpoint's queued deliveries, as the store exports them. */
async function collect(id: string): Promise<{ platform: string; url: string }[]> {
  for await (const row of h.server.store.snapshot.exportRows()) {
    if (row.id === id) return row.deliveries.map((d) => ({ platform: d.platform, url: d.url }));
  }
  return [];
}
