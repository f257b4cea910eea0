import { describe, expect, it } from 'vitest';
import { failure, raw, useServer } from './harness.ts';

const h = useServer();
const HOOK = (n: number) => `https://chat-a.example.com/api/webhooks/${n}/abcdefghijklmnopqrstuvwxyz0123456789`;

describe('updateEndpoint', () => {
  it('when several parameters are sent, then all are applied and the committed record is returned', async () => {
    const { id, token } = await h.endpoint();
    const updated = await h.client.updateEndpoint(id, token, {
      channel_chat_a: '912345678901234500',
      webhook_chat_a: HOOK(1),
      log_chat_b: 'log-b-1',
      blacklist: 'spam, Scam ,SPAM',
      allowed_ids: 'user-1,user-2',
      selfuse: true,
      beta: true,
    });
    expect(updated.config).toMatchObject({
      channels: { chat_a: ['912345678901234500'] },
      webhooks: { chat_a: [HOOK(1)], chat_c: [], chat_d: [] },
      logs: { chat_b: 'log-b-1' },
      blacklist: ['spam', 'Scam'],
      'allowed-ids': ['user-1', 'user-2'],
      'self-user': true,
      isbeta: true,
    });
    expect(await h.client.getEndpoint(id, token)).toEqual(updated);
  });

  it('when a value is already in the list, then it is a no-op with 200', async () => {
    const { id, token } = await h.endpoint();
    await h.client.updateEndpoint(id, token, { channel_chat_b: 'channel-b-1' });
    const again = await h.client.updateEndpoint(id, token, { channel_chat_b: 'channel-b-1' });
    expect(again.config.channels.chat_b).toEqual(['channel-b-1']);
  });

  it('when index is sent, then channel and webhook at that position are overwritten together', async () => {
    const { id, token } = await h.endpoint();
    await h.client.updateEndpoint(id, token, { channel_chat_a: 'a-000', webhook_chat_a: HOOK(1) });
    await h.client.updateEndpoint(id, token, { channel_chat_a: 'a-111', webhook_chat_a: HOOK(2) });
    const r = await h.client.updateEndpoint(id, token, { index: 1, channel_chat_a: 'a-222', webhook_chat_a: HOOK(3) });
    expect(r.config.channels.chat_a).toEqual(['a-000', 'a-222']);
    expect(r.config.webhooks.chat_a).toEqual([HOOK(1), HOOK(3)]);
  });

  it.each([
    ['beyond the list', { index: 5, channel_chat_a: 'a-999' }, 'index'],
    ['with a comma list', { index: 0, blacklist: 'x,y' }, 'blacklist'],
    ['without a list parameter', { index: 0, message_content: 'hello' }, 'index'],
  ] as const)('when index is %s, then 400 and nothing is applied', async (_case, params, parameter) => {
    const { id, token } = await h.endpoint();
    const before = await h.client.updateEndpoint(id, token, { channel_chat_a: 'a-000', blacklist: 'w' });
    const e = await failure(h.client.updateEndpoint(id, token, { ...params, log_chat_b: 'changed-log' }));
    expect(e.status).toBe(400);
    expect(e.problem.errors).toEqual([expect.objectContaining({ parameter })]);
    expect(await h.client.getEndpoint(id, token)).toEqual(before);
  });

  it('when index is beyond several lists at once, then errors names index once, with every list in its message', async () => {
    const { id, token } = await h.endpoint();
    const e = await failure(
      h.client.updateEndpoint(id, token, { index: 5, channel_chat_a: 'a-999', channel_chat_b: 'b-99999', blacklist: 'z' }),
    );
    expect(e.problem.errors).toHaveLength(1);
    expect(e.problem.errors?.[0]).toMatchObject({ parameter: 'index', in: 'query' });
    for (const list of ['channel_chat_a', 'channel_chat_b', 'blacklist']) expect(e.problem.errors?.[0]?.message).toContain(list);
  });

  it('when index is negative, then 400 naming index', async () => {
    const { id, token } = await h.endpoint();
    const e = await failure(h.client.updateEndpoint(id, token, { index: -1, channel_chat_a: 'a-0' }));
    expect(e.status).toBe(400);
    expect(e.problem.errors).toEqual([expect.objectContaining({ parameter: 'index' })]);
  });

  it.each(['webhook_chat_c', 'webhook_chat_d'] as const)(
    'when %s is sent, then it is ignored and the rest of the request is applied',
    async (parameter) => {
      const { id, token } = await h.endpoint();
      // Sent as an untyped bot would: the client's types leave these two out.
      const r = await raw(
        `${h.server.url}/update/${id}?token=${token}&${parameter}=${encodeURIComponent(HOOK(9))}&channel_chat_c=chan-c-1`,
        { method: 'POST' },
      );
      expect(r.status).toBe(200);
      const after = await h.client.getEndpoint(id, token);
      expect(after.config.channels.chat_c).toEqual(['chan-c-1']);
      expect(after.config.webhooks).toEqual({ chat_a: [], chat_b: [], chat_c: [], chat_d: [] });
    },
  );

  it('when message_embed is empty, then the message has no embed (every member "None")', async () => {
    const { id, token } = await h.endpoint();
    await h.client.updateEndpoint(id, token, { message_embed: '{"title":"T"}' });
    const r = await h.client.updateEndpoint(id, token, { message_embed: '' });
    expect(r.meta.message.embed.title).toBe('None');
  });

  it('when a webhook is plain http, then 400 (the operator has not allowed it)', async () => {
    const { id, token } = await h.endpoint();
    const e = await failure(
      h.client.updateEndpoint(id, token, { webhook_chat_b: 'http://chat-b.example.com/hooks/0123456789abcdef0123456789' }),
    );
    expect(e.status).toBe(400);
    expect(e.problem.errors).toEqual([expect.objectContaining({ parameter: 'webhook_chat_b' })]);
  });

  it.each([
    ['log_chat_b', 'abcd'],
    ['channel_chat_c', 'x'.repeat(51)],
    ['blacklist', 'x'.repeat(251)],
    ['message_content', 'x'.repeat(1501)],
    ['sender_channel', 'x'.repeat(151)],
    ['message_attachments', 'https://a.b/c'],
  ] as const)('when %s is out of its length bounds, then 400 naming it', async (parameter, value) => {
    const { id, token } = await h.endpoint();
    const e = await failure(h.client.updateEndpoint(id, token, { [parameter]: value }));
    expect(e.status).toBe(400);
    expect(e.problem.errors).toEqual([expect.objectContaining({ parameter, in: 'query' })]);
    expect(e.problem.type).toBe('https://chatbridge.dev/problems#validation');
  });

  it('when a channel as short or as long as its platform allows is bridged, then it can name itself as sender_channel', async () => {
    const { id, token } = await h.endpoint();
    for (const [sender, channel] of [
      ['chat_a', '1'],
      ['chat_b', '22222'],
      ['chat_b', 'b'.repeat(150)],
    ] as const) {
      await h.client.updateEndpoint(id, token, { [`channel_${sender}`]: channel });
      const r = await h.client.updateEndpoint(id, token, { sender, sender_channel: channel, message_content: 'hi' });
      expect([r.meta.sender, r.meta['sender-channel']]).toEqual([sender, channel]);
    }
  });

  it('when a value is exactly at its length bounds, then it is accepted', async () => {
    const { id, token } = await h.endpoint();
    const r = await h.client.updateEndpoint(id, token, {
      message_content: 'é'.repeat(1500),
      log_chat_b: 'abcde',
      channel_chat_b: 'c'.repeat(150),
    });
    expect(r.meta.message.content).toHaveLength(1500);
    expect(r.config.logs.chat_b).toBe('abcde');
  });

  it('when a value is made of characters outside the BMP, then its length bounds count code points, not UTF-16 units', async () => {
    const { id, token } = await h.endpoint();
    // 1,500 emoji are 3,000 UTF-16 units and are accepted; one code point more is refused.
    const r = await h.client.updateEndpoint(id, token, { message_content: '😀'.repeat(1500), message_author_name: `${'𝒜'.repeat(49)}a` });
    expect([...r.meta.message.content!]).toHaveLength(1500);
    expect([...r.meta.message.author.name!]).toHaveLength(50);
    const e = await failure(h.client.updateEndpoint(id, token, { message_content: `${'😀'.repeat(1500)}a` }));
    expect(e.status).toBe(400);
    expect(e.problem.errors).toEqual([expect.objectContaining({ parameter: 'message_content', in: 'query' })]);
  });

  it('when sender is not a platform, then 400 and nothing applied', async () => {
    const { id, token } = await h.endpoint();
    const r = await raw(`${h.server.url}/update/${id}?token=${token}&sender=chat_x&message_content=hi`, { method: 'POST' });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([expect.objectContaining({ parameter: 'sender' })]);
    expect((await h.client.getEndpoint(id, token)).meta.message.content).toBeNull();
  });

  it('when sender and trigger=true are sent, then read flags mark the sender and platforms without channels', async () => {
    const { id, token } = await h.endpoint();
    await h.client.updateEndpoint(id, token, { channel_chat_a: 'a-000', channel_chat_b: 'b-0000', channel_chat_c: 'c-0000' });
    const r = await h.client.updateEndpoint(id, token, {
      sender: 'chat_c',
      sender_channel: 'c-0000-chan',
      trigger: true,
      message_content: 'hi',
    });
    expect(r.meta).toMatchObject({ sender: 'chat_c', 'sender-channel': 'c-0000-chan', trigger: true });
    expect(r.meta.read).toEqual({ chat_a: false, chat_b: false, chat_c: true, chat_d: true });
  });

  it('when flags are absent, then they keep their values (no reset to the default)', async () => {
    const { id, token } = await h.endpoint();
    // Channels on two platforms, so the triggered message stays pending (not read everywhere at once).
    await h.client.updateEndpoint(id, token, { channel_chat_a: 'a-000', channel_chat_b: 'b-0000' });
    await h.client.updateEndpoint(id, token, { selfuse: true, beta: true, message_reply: true, trigger: true, sender: 'chat_a' });
    const r = await h.client.updateEndpoint(id, token, { message_content: 'next' });
    expect([r.config['self-user'], r.config.isbeta, r.meta.message.isReply, r.meta.trigger]).toEqual([true, true, true, true]);
  });

  it('when a boolean is not true/false, then 400 naming it', async () => {
    const { id, token } = await h.endpoint();
    const r = await raw(`${h.server.url}/update/${id}?token=${token}&selfuse=maybe`, { method: 'POST' });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([expect.objectContaining({ parameter: 'selfuse' })]);
  });

  it('when message fields are sent, then they overwrite meta.message, embed normalised', async () => {
    const { id, token } = await h.endpoint();
    const r = await h.client.updateEndpoint(id, token, {
      message_author_name: 'Ada',
      message_author_id: 'user-12345',
      message_author_avatar: 'https://cdn.chat-c.example.com/avatars/123456789/abcdef.png',
      message_attachments: 'https://cdn.example.com/files/1.png,https://cdn.example.com/files/2.png',
      message_embed: JSON.stringify({ title: 'Release', fields: [{ name: 'v', value: '1', inline: true }] }),
      message_reply: true,
      message_reply_message: 'original text',
      message_reply_author: 'Grace Hopper',
    });
    expect(r.meta.message).toEqual({
      attachments: ['https://cdn.example.com/files/1.png', 'https://cdn.example.com/files/2.png'],
      author: { avatar: 'https://cdn.chat-c.example.com/avatars/123456789/abcdef.png', id: 'user-12345', name: 'Ada' },
      content: null,
      embed: {
        title: 'Release',
        description: 'None',
        footer: 'None',
        image: 'None',
        thumbnail: 'None',
        fields: [{ name: 'v', value: '1', inline: true }],
      },
      isReply: true,
      reply: { author: 'Grace Hopper', message: 'original text' },
    });
  });

  it('when message_embed is not a JSON object, then 400 naming message_embed', async () => {
    const { id, token } = await h.endpoint();
    const e = await failure(h.client.updateEndpoint(id, token, { message_embed: '["not","an","object"]' }));
    expect(e.status).toBe(400);
    expect(e.problem.errors).toEqual([expect.objectContaining({ parameter: 'message_embed' })]);
    expect(e.problem.message).toBe(e.problem.detail);
  });

  it('when only_check=true, then nothing changes but invalid parameters are still rejected', async () => {
    const { id, token } = await h.endpoint();
    const before = await h.client.getEndpoint(id, token);
    const r = await h.client.updateEndpoint(id, token, { only_check: true, channel_chat_a: 'a-000', trigger: true, message_content: 'x' });
    expect(r).toEqual(before);
    expect(await h.client.getEndpoint(id, token)).toEqual(before);
    const e = await failure(h.client.updateEndpoint(id, token, { only_check: true, message_embed: 'nope' }));
    expect(e.status).toBe(400);
  });

  it('when only the token is sent, then the record is returned unchanged', async () => {
    const { id, token } = await h.endpoint();
    await h.client.updateEndpoint(id, token, { channel_chat_d: 'chan-d-1' });
    const before = await h.client.getEndpoint(id, token);
    expect(await h.client.updateEndpoint(id, token)).toEqual(before);
  });

  it('when values hold & ? # % quotes, + and Unicode, then they round-trip exactly', async () => {
    const { id, token } = await h.endpoint();
    const content = `a&b=c?d#e%20f%g +plus "dq" 'sq' \\ ünïcødé 日本語 🎉 \ttab\r\nend`;
    const r = await h.client.updateEndpoint(id, token, { message_content: content, message_author_name: '?&#%"\'' });
    expect(r.meta.message.content).toBe(content);
    expect(r.meta.message.author.name).toBe('?&#%"\'');
    expect((await h.client.getEndpoint(id, token)).meta.message.content).toBe(content);
  });

  it('when bots send comma lists and URLs unencoded (as existing bots do), then they are accepted', async () => {
    const { id, token } = await h.endpoint();
    const r = await raw(`${h.server.url}/update/${id}?token=${token}&blacklist=one,two&webhook_chat_a=${HOOK(7)}`, { method: 'POST' });
    expect(r.status).toBe(200);
    expect(r.body.config.blacklist).toEqual(['one', 'two']);
    expect(r.body.config.webhooks.chat_a).toEqual([HOOK(7)]);
  });

  it('when a parameter without allowReserved holds a raw reserved character, then 400 naming it, and nothing is applied', async () => {
    const { id, token } = await h.endpoint();
    const r = await raw(`${h.server.url}/update/${id}?token=${token}&message_content=kept:out&sender=chat_a:x`, { method: 'POST' });
    expect(r.status).toBe(400);
    // Named, not "must be url encoded": encodeURIComponent leaves `!` as it is, and no encoding helps.
    expect(r.body.errors).toEqual([{ parameter: 'sender', in: 'query', message: "must not contain ':'" }]);
    expect((await h.client.getEndpoint(id, token)).meta.message.content).toBeNull();
    const bang = await raw(`${h.server.url}/${id}?token=${token.slice(0, -1)}!`);
    expect(bang.body.errors).toEqual([{ parameter: 'token', in: 'query', message: "must not contain '!'" }]);
    // A raw `+` (a space once decoded) is named too.
    const plus = await raw(`${h.server.url}/update/${id}?token=${token}&sender=chat_a+`, { method: 'POST' });
    expect(plus.body.errors).toEqual([{ parameter: 'sender', in: 'query', message: "must not contain '+'" }]);
  });

  it('when a key or value is not valid percent-encoded UTF-8, then 400 naming each, and nothing is applied', async () => {
    const { id, token } = await h.endpoint();
    for (const bad of ['%FF', '%ED%A0%80', '%E0%A4', '%ZZ', 'ok%', 'ok%2', '%20%2G', '%41%80']) {
      const r = await raw(`${h.server.url}/update/${id}?token=${token}&message_content=${bad}&blacklist=%FF&beta=true`, { method: 'POST' });
      expect(r.status).toBe(400);
      expect(r.type).toContain('application/problem+json');
      expect(r.body.errors).toEqual([
        { parameter: 'message_content', in: 'query', message: 'is not valid percent-encoded UTF-8' },
        { parameter: 'blacklist', in: 'query', message: 'is not valid percent-encoded UTF-8' },
      ]);
    }
    const key = await raw(`${h.server.url}/update/${id}?token=${token}&%FFoo=1`, { method: 'POST' });
    expect(key.status).toBe(400);
    expect(key.body.errors).toEqual([{ parameter: '%FFoo', in: 'query', message: 'is not valid percent-encoded UTF-8' }]);
    const record = await h.client.getEndpoint(id, token);
    expect(record.meta.message.content).toBeNull();
    expect(record.config.blacklist).toEqual([]);
    expect(record.config.isbeta).toBe(false);
    // Well-formed escapes of the same characters still round-trip.
    const ok = await raw(`${h.server.url}/update/${id}?token=${token}&message_content=%C3%BF%EF%BF%BD%25ZZ`, { method: 'POST' });
    expect(ok.status).toBe(200);
    expect(ok.body.meta.message.content).toBe('\u00ff\ufffd%ZZ');
  });

  it('when several parameters are invalid or unknown, then one 400 names every one of them, and nothing is applied', async () => {
    const { id, token } = await h.endpoint();
    const post = (query: string) => raw(`${h.server.url}/update/${id}?token=${token}&${query}`, { method: 'POST' });
    const named = (r: { body: { errors: { parameter: string }[] } }) => r.body.errors.map((e) => e.parameter).sort();

    const schema = await post('sender=bad&beta=maybe&log_chat_b=x&message_content=kept');
    expect(schema.status).toBe(400);
    expect(named(schema)).toEqual(['beta', 'log_chat_b', 'sender']);
    const unknown = await post('foo=1&bar=2&beta=true');
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([
      { parameter: 'foo', in: 'query', message: 'unknown parameter' },
      { parameter: 'bar', in: 'query', message: 'unknown parameter' },
    ]);
    const both = await post('foo=1&beta=maybe');
    expect(named(both)).toEqual(['beta', 'foo']);

    const record = await h.client.getEndpoint(id, token);
    expect(record.meta.message.content).toBeNull();
    expect(record.config.isbeta).toBe(false);
  });

  it('when a parameter is repeated, then 400 naming it', async () => {
    const { id, token } = await h.endpoint();
    const r = await raw(`${h.server.url}/update/${id}?token=${token}&channel_chat_c=chan-1&channel_chat_c=chan-2`, { method: 'POST' });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([expect.objectContaining({ parameter: 'channel_chat_c', message: 'was given more than once' })]);
  });

  it('when message_content is empty (an attachment-only message), then the content becomes the empty string', async () => {
    const { id, token } = await h.endpoint();
    const r = await raw(
      `${h.server.url}/update/${id}?token=${token}&message_content=&message_attachments=https://cdn.example.com/files/1.png`,
      {
        method: 'POST',
      },
    );
    expect(r.status).toBe(200);
    expect(r.body.meta.message).toMatchObject({ content: '', attachments: ['https://cdn.example.com/files/1.png'] });
  });

  it('when the token is wrong, then 401 and nothing is applied', async () => {
    const { id, token } = await h.endpoint();
    const other = await h.endpoint();
    const e = await failure(h.client.updateEndpoint(id, other.token, { channel_chat_a: 'a-000' }));
    expect(e.status).toBe(401);
    expect((await h.client.getEndpoint(id, token)).config.channels.chat_a).toEqual([]);
  });
});

describe('updateEndpoint: booleans as Python bots send them', () => {
  it('when booleans are True/False in any letter case, then they are read as true/false; other words are still 400', async () => {
    const { id, token } = await h.endpoint();
    const r = await raw(`${h.server.url}/update/${id}?token=${token}&selfuse=True&beta=FALSE&message_reply=true`, { method: 'POST' });
    expect(r.status).toBe(200);
    expect([r.body.config['self-user'], r.body.config.isbeta, r.body.meta.message.isReply]).toEqual([true, false, true]);
    const bad = await raw(`${h.server.url}/update/${id}?token=${token}&selfuse=Yes`, { method: 'POST' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([expect.objectContaining({ parameter: 'selfuse' })]);
  });
});
