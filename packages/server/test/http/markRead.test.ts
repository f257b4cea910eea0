import { describe, expect, it } from 'vitest';
import { initialRecord } from '../../src/domain/record.ts';
import { failure, raw, useServer } from './harness.ts';

const h = useServer();

async function pendingFromChatC() {
  const { id, token } = await h.endpoint('read');
  await h.client.updateEndpoint(id, token, { channel_chat_a: 'a-0', channel_chat_b: 'b-0000', channel_chat_c: 'c-0000' });
  await h.client.updateEndpoint(id, token, { sender: 'chat_c', sender_channel: 'c-0000-chan', message_content: 'hi', trigger: true });
  return { id, token };
}

describe('markRead', () => {
  it('when a platform marks read, then its flag is set and the message stays pending', async () => {
    const { id, token } = await pendingFromChatC();
    const record = await h.client.markRead(id, token, 'chat_a');
    expect(record.meta.read).toEqual({ chat_a: true, chat_b: false, chat_c: true, chat_d: true });
    expect(record.meta.trigger).toBe(true);
  });

  it('when the last platform marks read, then the endpoint resets to idle in the same call, config kept', async () => {
    const { id, token } = await pendingFromChatC();
    await h.client.markRead(id, token, 'chat_a');
    const record = await h.client.markRead(id, token, 'chat_b');
    expect(record.meta).toEqual(initialRecord().meta);
    expect(record.config.channels.chat_c).toEqual(['c-0000']);
  });

  it('when idle, then marking read changes nothing', async () => {
    const { id, token } = await h.endpoint('read');
    expect((await h.client.markRead(id, token, 'chat_d')).meta).toEqual(initialRecord().meta);
  });

  it('when the platform is unknown, then 400 naming platform', async () => {
    const { id, token } = await pendingFromChatC();
    const r = await raw(`${h.server.url}/read/${id}?token=${token}&platform=chat_z`, { method: 'POST' });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([expect.objectContaining({ parameter: 'platform' })]);
  });

  it('when the token is wrong, then 401 and nothing changes', async () => {
    const { id, token } = await pendingFromChatC();
    const other = await h.endpoint('read');
    expect((await failure(h.client.markRead(id, other.token, 'chat_a'))).status).toBe(401);
    expect((await h.client.getEndpoint(id, token)).meta.read.chat_a).toBe(false);
  });
});
