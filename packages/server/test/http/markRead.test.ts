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

  it('when a message is pending, then every answer carrying the record names it with Chatbridge-Message-Number; when idle, none does', async () => {
    const { id, token } = await h.endpoint('read');
    const url = (path: string, query = '') => `${h.server.url}/${path}${id}?token=${token}${query}`;
    const number = (r: Response) => r.headers.get('chatbridge-message-number');
    expect(number(await fetch(url('')))).toBeNull();
    await fetch(url('update/', '&channel_chat_a=a-0&channel_chat_c=c-0000'), { method: 'POST' });
    expect(number(await fetch(url('update/', '&sender=chat_c&sender_channel=c-0000-chan&trigger=true'), { method: 'POST' }))).toBe('1');
    expect(number(await fetch(url('')))).toBe('1');
    expect(number(await fetch(url('update/', '&sender=chat_c&sender_channel=c-0000-chan&trigger=true'), { method: 'POST' }))).toBe('2');
    const last = await fetch(url('read/', '&platform=chat_a&message_number=2'), { method: 'POST' });
    expect(last.status).toBe(200);
    expect(number(last)).toBeNull(); // read everywhere: idle again
    expect(number(await fetch(url('')))).toBeNull();
  });

  it('when markRead names a message a newer one replaced, then 409 and the newer message stays unread for that platform', async () => {
    const { id, token } = await pendingFromChatC(); // message 1, read by chat_c (the sender)
    await h.client.updateEndpoint(id, token, { sender: 'chat_b', sender_channel: 'b-0000-chan', message_content: 'newer', trigger: true }); // message 2
    const late = await raw(`${h.server.url}/read/${id}?token=${token}&platform=chat_a&message_number=1`, { method: 'POST' });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({
      type: 'https://chatbridge.dev/problems#conflict',
      detail: 'Message 1 is no longer pending (message 2 is); nothing was marked.',
    });
    const record = await h.client.getEndpoint(id, token);
    expect(record.meta).toMatchObject({ trigger: true, message: { content: 'newer' }, read: { chat_a: false } });
    const current = await raw(`${h.server.url}/read/${id}?token=${token}&platform=chat_a&message_number=2`, { method: 'POST' });
    expect(current.status).toBe(200);
    expect(current.body.meta.read.chat_a).toBe(true);
  });

  it('when markRead names a message while none is pending, then 409 saying so, and nothing changes', async () => {
    const { id, token } = await h.endpoint('read');
    const r = await raw(`${h.server.url}/read/${id}?token=${token}&platform=chat_d&message_number=3`, { method: 'POST' });
    expect(r.status).toBe(409);
    expect(r.body.detail).toBe('Message 3 is no longer pending (no message is); nothing was marked.');
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
