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

  it('when messages are queued, then every answer carrying the record names the message it shows with Chatbridge-Message-Number; when idle, none does', async () => {
    const { id, token } = await h.endpoint('read');
    const url = (path: string, query = '') => `${h.server.url}/${path}${id}?token=${token}${query}`;
    const number = (r: Response) => r.headers.get('chatbridge-message-number');
    expect(number(await fetch(url('')))).toBeNull();
    await fetch(url('update/', '&channel_chat_a=a-0&channel_chat_c=c-0000'), { method: 'POST' });
    expect(number(await fetch(url('update/', '&sender=chat_c&sender_channel=c-0000-chan&trigger=true'), { method: 'POST' }))).toBe('1');
    expect(number(await fetch(url('')))).toBe('1');
    // The sender's answer shows the message it just sent; a read shows the oldest still unread.
    expect(number(await fetch(url('update/', '&sender=chat_c&sender_channel=c-0000-chan&trigger=true'), { method: 'POST' }))).toBe('2');
    expect(number(await fetch(url('')))).toBe('1');
    expect(number(await fetch(url('', '&platform=chat_a')))).toBe('1');
    // Marking message 2 first: chat_a has still message 1 to relay, which the answer shows.
    const second = await fetch(url('read/', '&platform=chat_a&message_number=2'), { method: 'POST' });
    expect([second.status, number(second)]).toEqual([200, '1']);
    const last = await fetch(url('read/', '&platform=chat_a&message_number=1'), { method: 'POST' });
    expect(last.status).toBe(200);
    expect(number(last)).toBeNull(); // read everywhere: idle again
    expect(number(await fetch(url('')))).toBeNull();
  });

  it('when markRead names an older message while a newer one is queued, then that one is marked and the answer shows the next one the platform has to relay', async () => {
    const { id, token } = await pendingFromChatC(); // message 1, read by chat_c (the sender)
    await h.client.updateEndpoint(id, token, { sender: 'chat_b', sender_channel: 'b-0000-chan', message_content: 'newer', trigger: true }); // message 2
    const read = (n: number) => raw(`${h.server.url}/read/${id}?token=${token}&platform=chat_a&message_number=${n}`, { method: 'POST' });
    const first = await read(1);
    expect(first.status).toBe(200);
    expect(first.headers.get('chatbridge-message-number')).toBe('2');
    expect(first.body.meta).toMatchObject({ trigger: true, message: { content: 'newer' }, read: { chat_a: false } });
    // Seen by nobody in particular: message 1, which chat_b has still to read.
    const record = await h.client.getEndpoint(id, token);
    expect(record.meta).toMatchObject({ trigger: true, message: { content: 'hi' }, read: { chat_a: true, chat_b: false } });
    // Marking it again is no error and changes nothing.
    const again = await read(1);
    expect([again.status, again.headers.get('chatbridge-message-number')]).toEqual([200, '2']);
    const current = await read(2);
    expect(current.status).toBe(200);
    expect(current.body.meta.read.chat_a).toBe(true);
    // Nothing left for chat_a: the answer shows what others have still to read (message 1, for chat_b).
    expect(current.headers.get('chatbridge-message-number')).toBe('1');
  });

  it('when markRead names a message that was never sent, then 409 naming the newest, and nothing changes', async () => {
    const { id, token } = await h.endpoint('read');
    const r = await raw(`${h.server.url}/read/${id}?token=${token}&platform=chat_d&message_number=3`, { method: 'POST' });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({
      type: 'https://chatbridge.dev/problems#conflict',
      detail: 'There is no message 3 (the newest is 0); nothing was marked.',
    });
    const pending = await pendingFromChatC();
    const above = await raw(`${h.server.url}/read/${pending.id}?token=${pending.token}&platform=chat_a&message_number=2`, {
      method: 'POST',
    });
    expect([above.status, above.body.detail]).toEqual([409, 'There is no message 2 (the newest is 1); nothing was marked.']);
    expect((await h.client.getEndpoint(pending.id, pending.token)).meta.read.chat_a).toBe(false);
  });

  it('when markRead names a message already read everywhere (the endpoint idle again), then 200 and nothing changes', async () => {
    const { id, token } = await pendingFromChatC();
    await h.client.markRead(id, token, 'chat_a');
    await h.client.markRead(id, token, 'chat_b');
    const r = await raw(`${h.server.url}/read/${id}?token=${token}&platform=chat_a&message_number=1`, { method: 'POST' });
    expect(r.status).toBe(200);
    expect(r.headers.get('chatbridge-message-number')).toBeNull();
    expect(r.body.meta).toEqual(initialRecord().meta);
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
