import { describe, expect, it } from 'vitest';
import { initialRecord, type EndpointRecord, type Platform } from '../../src/domain/record.ts';
import {
  buildWebhookPayload,
  buildWebhookPayloadFor,
  isEmptyPayload,
  PAYLOAD_LIMITS,
  parseQueuedCreate,
  QUEUED_REPLY_TO,
  queuedCreateBody,
  truncate,
  webhookBody,
  webhookBodyFor,
  webhookEditBody,
  withReplyReference,
} from '../../src/delivery/payload.ts';

type MessageInput = Partial<Omit<EndpointRecord['meta']['message'], 'author' | 'reply' | 'embed'>> & {
  author?: Partial<EndpointRecord['meta']['message']['author']>;
  reply?: Partial<EndpointRecord['meta']['message']['reply']>;
  embed?: Partial<EndpointRecord['meta']['message']['embed']>;
};

function recordWith(message: MessageInput): EndpointRecord {
  const record = initialRecord();
  const m = record.meta.message;
  const { author, reply, embed, ...rest } = message;
  Object.assign(m, rest);
  Object.assign(m.author, author);
  Object.assign(m.reply, reply);
  Object.assign(m.embed, embed);
  return record;
}

describe('buildWebhookPayload: plain messages', () => {
  it('when a plain message is built, then content, username and avatar_url map one to one and mentions are disabled', () => {
    const payload = buildWebhookPayload(
      recordWith({
        content: 'Hello **world** @everyone <@123>',
        author: { name: 'Alice', avatar: 'https://cdn.example.com/a.png', id: '42' },
      }),
    );
    expect(payload).toEqual({
      content: 'Hello **world** @everyone <@123>',
      username: 'Alice',
      avatar_url: 'https://cdn.example.com/a.png',
      allowed_mentions: { parse: [] },
    });
  });

  it('when the record is initial (all null), then only allowed_mentions is present and the payload is empty', () => {
    const payload = buildWebhookPayload(initialRecord());
    expect(payload).toEqual({ allowed_mentions: { parse: [] } });
    expect(isEmptyPayload(payload)).toBe(true);
    expect(JSON.stringify(payload)).not.toContain('null');
  });

  it('when content has surrounding whitespace and line breaks, then it is passed unaltered', () => {
    const content = '  line one\n\n  line two  \n';
    expect(buildWebhookPayload(recordWith({ content })).content).toBe(content);
  });

  it('when the name is blank or the avatar is not an http(s) URL, then they are omitted', () => {
    const payload = buildWebhookPayload(recordWith({ content: 'x', author: { name: '   ', avatar: 'not a url' } }));
    expect(payload).not.toHaveProperty('username');
    expect(payload).not.toHaveProperty('avatar_url');
    const ftp = buildWebhookPayload(recordWith({ content: 'x', author: { avatar: 'ftp://example.com/a.png' } }));
    expect(ftp).not.toHaveProperty('avatar_url');
  });

  it('when content is the empty string, then content is omitted', () => {
    expect(buildWebhookPayload(recordWith({ content: '' }))).not.toHaveProperty('content');
  });
});

describe('buildWebhookPayload: replies and attachments', () => {
  it('when the message is a reply, then a quote block with the bold author precedes the content', () => {
    const payload = buildWebhookPayload(recordWith({ content: 'Agreed!', isReply: true, reply: { author: 'Bob', message: 'Shall we?' } }));
    expect(payload.content).toBe('> **Bob**: Shall we?\nAgreed!');
  });

  it('when the replied-to message has several lines, then every line is quoted', () => {
    const payload = buildWebhookPayload(
      recordWith({ content: 'yes', isReply: true, reply: { author: 'Bob', message: 'first\nsecond\r\n\nfourth' } }),
    );
    expect(payload.content).toBe('> **Bob**: first\n> second\n> \n> fourth\nyes');
  });

  it('when the reply author is null, then the quote has no author part', () => {
    const payload = buildWebhookPayload(recordWith({ content: 'yes', isReply: true, reply: { author: null, message: 'a\nb' } }));
    expect(payload.content).toBe('> a\n> b\nyes');
  });

  it('when isReply is false, then stale reply members are ignored', () => {
    const payload = buildWebhookPayload(recordWith({ content: 'yes', isReply: false, reply: { author: 'Bob', message: 'old' } }));
    expect(payload.content).toBe('yes');
  });

  it('when the replied-to message is long, then the quoted text is cut to the quote limit', () => {
    const payload = buildWebhookPayload(recordWith({ content: 'mine', isReply: true, reply: { author: null, message: 'q'.repeat(3000) } }));
    expect(payload.content).toBe(`> ${'q'.repeat(PAYLOAD_LIMITS.replyQuote - 1)}…\nmine`);
  });

  it('when there are attachments, then each URL is appended on its own line', () => {
    const payload = buildWebhookPayload(
      recordWith({ content: 'look', attachments: ['https://cdn.example.com/1.png', 'https://cdn.example.com/2.mp4'] }),
    );
    expect(payload.content).toBe('look\nhttps://cdn.example.com/1.png\nhttps://cdn.example.com/2.mp4');
  });

  it('when there are only attachments, then content is the links alone', () => {
    const payload = buildWebhookPayload(recordWith({ attachments: ['https://cdn.example.com/1.png'] }));
    expect(payload.content).toBe('https://cdn.example.com/1.png');
  });

  it('when reply, content and attachments are all present, then they come in that order', () => {
    const payload = buildWebhookPayload(
      recordWith({ content: 'body', isReply: true, reply: { author: 'Bob', message: 'q' }, attachments: ['https://x.example/a'] }),
    );
    expect(payload.content).toBe('> **Bob**: q\nbody\nhttps://x.example/a');
  });
});

describe('buildWebhookPayload: embeds', () => {
  it('when the embed is all "None" with no fields, then embeds is omitted', () => {
    expect(buildWebhookPayload(recordWith({ content: 'x' }))).not.toHaveProperty('embeds');
  });

  it('when some embed members are "None", then only the others are sent', () => {
    const payload = buildWebhookPayload(
      recordWith({
        embed: { title: 'Release', description: 'None', footer: 'v1.2', image: 'None', thumbnail: 'https://cdn.example.com/t.png' },
      }),
    );
    expect(payload.embeds).toEqual([{ title: 'Release', footer: { text: 'v1.2' }, thumbnail: { url: 'https://cdn.example.com/t.png' } }]);
    expect(payload).not.toHaveProperty('content');
    expect(isEmptyPayload(payload)).toBe(false);
  });

  it('when every embed member is set, then the full embed shape is produced', () => {
    const payload = buildWebhookPayload(
      recordWith({
        embed: {
          title: 'T',
          description: 'D',
          footer: 'F',
          image: 'https://cdn.example.com/i.png',
          thumbnail: 'https://cdn.example.com/t.png',
          fields: [
            { name: 'a', value: '1', inline: true },
            { name: 'b', value: '2', inline: false },
          ],
        },
      }),
    );
    expect(payload.embeds).toEqual([
      {
        title: 'T',
        description: 'D',
        footer: { text: 'F' },
        image: { url: 'https://cdn.example.com/i.png' },
        thumbnail: { url: 'https://cdn.example.com/t.png' },
        fields: [
          { name: 'a', value: '1', inline: true },
          { name: 'b', value: '2', inline: false },
        ],
      },
    ]);
  });

  it('when only fields are set, then an embed with just fields is sent', () => {
    const payload = buildWebhookPayload(recordWith({ embed: { fields: [{ name: 'k', value: 'v', inline: false }] } }));
    expect(payload.embeds).toEqual([{ fields: [{ name: 'k', value: 'v', inline: false }] }]);
  });

  it('when an embed image is not an http(s) URL, then it is omitted (and an embed left empty is omitted)', () => {
    expect(buildWebhookPayload(recordWith({ content: 'x', embed: { image: 'javascript:alert(1)' } }))).not.toHaveProperty('embeds');
  });

  it('when a field has an empty name or value, then a zero-width space stands in', () => {
    const payload = buildWebhookPayload(recordWith({ embed: { fields: [{ name: '', value: '', inline: false }] } }));
    expect(payload.embeds?.[0]?.fields).toEqual([{ name: '\u200b', value: '\u200b', inline: false }]);
  });

  it('when there are more than 25 fields or too much embed text, then fields are dropped and text cut to the limits', () => {
    const many = Array.from({ length: 30 }, (_, i) => ({ name: `n${i}`, value: 'v'.repeat(1500), inline: false }));
    const payload = buildWebhookPayload(recordWith({ embed: { title: 't'.repeat(300), description: 'd'.repeat(5000), fields: many } }));
    const embed = payload.embeds![0]!;
    expect(embed.title).toHaveLength(256);
    expect(embed.title!.endsWith('…')).toBe(true);
    expect(embed.fields!.every((f) => f.value.length === 1024)).toBe(true);
    const total =
      embed.title!.length + (embed.description?.length ?? 0) + embed.fields!.reduce((n, f) => n + f.name.length + f.value.length, 0);
    expect(total).toBeLessThanOrEqual(PAYLOAD_LIMITS.embedTotal);
    // title 256 + description 4096 leave room for one 2 + 1024 field; the other 24 kept fields are dropped
    expect(embed.description).toHaveLength(4096);
    expect(embed.fields).toHaveLength(1);
    expect(total).toBe(256 + 4096 + 2 + 1024);
  });

  it('when title and description alone exceed the total, then the description is shortened to fit', () => {
    const payload = buildWebhookPayload(
      recordWith({ embed: { title: 't'.repeat(256), description: 'd'.repeat(4096), footer: 'f'.repeat(2048) } }),
    );
    const embed = payload.embeds![0]!;
    expect(embed.title!.length + embed.description!.length + embed.footer!.text.length).toBe(PAYLOAD_LIMITS.embedTotal);
    expect(embed.description!.endsWith('…')).toBe(true);
  });
});

describe('buildWebhookPayload: limits', () => {
  it('when content is exactly 2000 characters, then it is not cut', () => {
    const content = 'x'.repeat(2000);
    expect(buildWebhookPayload(recordWith({ content })).content).toBe(content);
  });

  it('when content is over 2000 characters, then it is cut to 2000 ending with an ellipsis', () => {
    const out = buildWebhookPayload(recordWith({ content: 'x'.repeat(2500) })).content!;
    expect(out).toHaveLength(2000);
    expect(out).toBe(`${'x'.repeat(1999)}…`);
  });

  it('when content plus attachments exceed the limit, then the text is cut so that the links fit whole', () => {
    const link = 'https://cdn.example.com/file.png';
    const out = buildWebhookPayload(recordWith({ content: 'x'.repeat(1990), attachments: [link] })).content!;
    expect(out).toHaveLength(2000);
    expect(out).toBe(`${'x'.repeat(2000 - link.length - 2)}…\n${link}`);
  });

  it('when a reply, text of characters outside the BMP and two links exceed the limit, then quote and links are kept and the text is cut', () => {
    const links = ['https://cdn.example.com/a.png', 'https://cdn.example.com/b.png'];
    const out = buildWebhookPayload(
      recordWith({
        isReply: true,
        reply: { author: 'Grace', message: 'orig' },
        content: `@everyone ${'😀'.repeat(1480)}`,
        attachments: links,
      }),
    ).content!;
    expect(out.length).toBeLessThanOrEqual(2000);
    expect(out.startsWith('> **Grace**: orig\n@everyone 😀')).toBe(true);
    expect(out.endsWith(`…\n${links.join('\n')}`)).toBe(true);
    expect(out).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/); // no half surrogate pair
  });

  it('when a long reply quote and the new text exceed the limit, then the quote gives way first, down to 100 characters, before the text is cut', () => {
    const reply = { author: 'Bobby', message: 'r'.repeat(1500) };
    const fits = buildWebhookPayload(recordWith({ isReply: true, reply, content: 't'.repeat(1700) })).content!;
    // The quote shrank to make room; the new text is whole.
    expect(fits.length).toBeLessThanOrEqual(2000);
    expect(fits.endsWith(`\n${'t'.repeat(1700)}`)).toBe(true);
    expect(fits.startsWith('> **Bobby**: rrr')).toBe(true);
    const crowded = buildWebhookPayload(recordWith({ isReply: true, reply, content: 'u'.repeat(1990) })).content!;
    // No room even at its minimum: the quote keeps 100 characters and the text is cut instead.
    expect(crowded).toHaveLength(2000);
    expect(crowded.startsWith(`> **Bobby**: ${'r'.repeat(99)}…\nuuu`)).toBe(true);
    expect(crowded.endsWith('u…')).toBe(true);
  });

  it('when the quote that gives way has many lines, then it keeps as much as fits (each cut line also takes its "> ")', () => {
    const reply = { author: 'Bobby', message: Array.from({ length: 400 }, () => 'ab').join('\n') };
    const content = buildWebhookPayload(
      recordWith({ isReply: true, reply, content: 'x'.repeat(1500), attachments: ['https://cdn.example.com/a.png'] }),
    ).content!;
    expect(content.length).toBeLessThanOrEqual(2000);
    expect(content.length).toBeGreaterThan(1990); // the quote keeps what fits, so the content ends within a few characters of the limit
    expect(content.endsWith(`${'x'.repeat(1500)}\nhttps://cdn.example.com/a.png`)).toBe(true);
  });

  it('when the links alone leave no room for the text, then the whole content is cut at its end', () => {
    const long = `https://cdn.example.com/${'p'.repeat(1500)}`;
    const out = buildWebhookPayload(recordWith({ content: 'hello', attachments: [long, long] })).content!;
    expect(out).toHaveLength(2000);
    expect(out.startsWith(`hello\n${long}\n`)).toBe(true);
    expect(out.endsWith('…')).toBe(true);
  });

  it('when the username is over 80 characters, then it is cut to 80; at 80 it is kept', () => {
    expect(buildWebhookPayload(recordWith({ author: { name: 'n'.repeat(100) } })).username).toBe(`${'n'.repeat(79)}…`);
    expect(buildWebhookPayload(recordWith({ author: { name: 'n'.repeat(80) } })).username).toBe('n'.repeat(80));
  });

  it('when a cut falls inside a surrogate pair, then the pair is dropped whole', () => {
    const text = `${'a'.repeat(8)}😀😀`; // 12 code units
    expect(truncate(text, 10)).toBe(`${'a'.repeat(8)}…`);
    expect(truncate(text, 12)).toBe(text);
  });
});

/** A record whose message natively replies to message `number`, with the given IDs of its copies. */
function nativeReply(message: MessageInput, ids: Partial<Record<Platform, string>>, number = 3): EndpointRecord {
  const record = recordWith({ isReply: true, reply: { author: 'Bob', message: 'Shall we?' }, ...message });
  Object.assign(record.meta.message.reply, { number, ids });
  return record;
}

describe('webhookBodyFor: native replies', () => {
  it('when the reply target has an ID on the receiving platform, then the create carries a reference to it and keeps the quote', () => {
    const record = nativeReply({ content: 'Agreed!' }, { chat_a: 'a-1', chat_c: 'c-1', chat_d: 'd-1' });
    const body = JSON.parse(webhookBodyFor(record, 'chat_a')!);
    expect(body).toEqual({
      allowed_mentions: { parse: [] },
      content: '> **Bob**: Shall we?\nAgreed!',
      message_reference: { message_id: 'a-1', fail_if_not_exists: false },
    });
  });

  it('when the receiving platform has no ID of the reply target, then the create is the plain one', () => {
    const record = nativeReply({ content: 'Agreed!' }, { chat_a: 'a-1', chat_c: 'c-1' });
    expect(webhookBodyFor(record, 'chat_b')).toBe(webhookBody(record));
    expect(buildWebhookPayloadFor(record, 'chat_b')).not.toHaveProperty('message_reference');
  });

  it('when webhookBody is asked (no receiving platform), then no reference is added', () => {
    const record = nativeReply({ content: 'Agreed!' }, { chat_a: 'a-1' });
    expect(JSON.parse(webhookBody(record)!)).not.toHaveProperty('message_reference');
  });

  it('when isReply is false or the ID is not a message ID, then no reference is added', () => {
    const stale = nativeReply({ content: 'x', isReply: false }, { chat_a: 'a-1' });
    expect(buildWebhookPayloadFor(stale, 'chat_a')).not.toHaveProperty('message_reference');
    for (const id of ['', 'a b', 'x'.repeat(101)]) {
      expect(buildWebhookPayloadFor(nativeReply({ content: 'x' }, { chat_a: id }), 'chat_a')).not.toHaveProperty('message_reference');
    }
  });

  it('when a reply has nothing to show, then there is no body, reference or not', () => {
    const record = nativeReply({ reply: { author: null, message: null } }, { chat_a: 'a-1' });
    expect(webhookBodyFor(record, 'chat_a')).toBeUndefined();
  });
});

describe('queued creates: a native reply names the copy its webhook has when it is sent', () => {
  it("when a native reply is queued, then its body keeps the target's number, and parsing it gives back the payload to send", () => {
    const record = nativeReply({ content: 'Agreed!' }, { chat_c: 'c-1' }, 7);
    const queued = queuedCreateBody(record, 'chat_a')!;
    expect(JSON.parse(queued)[QUEUED_REPLY_TO]).toBe(7);
    const { payload, replyTo } = parseQueuedCreate(queued);
    expect(replyTo).toBe(7);
    expect(payload).toEqual(JSON.parse(webhookBodyFor(record, 'chat_a')!));
    expect(withReplyReference(payload, 'a-9').message_reference).toEqual({ message_id: 'a-9', fail_if_not_exists: false });
  });

  it('when a message is no native reply, or a body was queued without a number, then nothing is resolved', () => {
    const plain = recordWith({ content: 'hi' });
    expect(queuedCreateBody(plain, 'chat_a')).toBe(webhookBodyFor(plain, 'chat_a'));
    expect(parseQueuedCreate(webhookBodyFor(plain, 'chat_a')!).replyTo).toBeUndefined();
    for (const bad of [0, -1, 1.5, '3', null])
      expect(parseQueuedCreate(JSON.stringify({ content: 'x', [QUEUED_REPLY_TO]: bad })).replyTo).toBeUndefined();
  });

  it('when the copy named is not a message ID, then the payload keeps the reference it was queued with', () => {
    const payload = parseQueuedCreate(queuedCreateBody(nativeReply({ content: 'x' }, { chat_a: 'a-1' }), 'chat_a')!).payload;
    for (const id of [undefined, '', 'a b']) expect(withReplyReference(payload, id)).toEqual(payload);
    expect(payload.message_reference?.message_id).toBe('a-1');
  });
});

describe('webhookEditBody', () => {
  it('when a message is edited, then the body has content, embeds and mentions disabled, never the author', () => {
    const message = recordWith({
      content: 'fixed @everyone',
      author: { name: 'Alice', avatar: 'https://cdn.example.com/a.png' },
      embed: { title: 'T' },
    }).meta.message;
    expect(JSON.parse(webhookEditBody(message)!)).toEqual({
      content: 'fixed @everyone',
      embeds: [{ title: 'T' }],
      allowed_mentions: { parse: [] },
    });
  });

  it('when the edit has no text or no embed, then content is "" or embeds is [] (an absent member would leave the old one)', () => {
    expect(JSON.parse(webhookEditBody(recordWith({ content: 'only text' }).meta.message)!)).toEqual({
      content: 'only text',
      embeds: [],
      allowed_mentions: { parse: [] },
    });
    expect(JSON.parse(webhookEditBody(recordWith({ embed: { description: 'only embed' } }).meta.message)!)).toEqual({
      content: '',
      embeds: [{ description: 'only embed' }],
      allowed_mentions: { parse: [] },
    });
  });

  it('when the edited message would show nothing, then there is no body', () => {
    expect(webhookEditBody(recordWith({ content: '' }).meta.message)).toBeUndefined();
  });

  it('when the edit is a reply with links and long text, then it is rendered and cut exactly as the create is', () => {
    const record = recordWith({
      isReply: true,
      reply: { author: 'Bobby', message: 'r'.repeat(1500) },
      content: 'u'.repeat(1990),
      attachments: ['https://cdn.example.com/a.png'],
      embed: { title: 't'.repeat(300) },
    });
    const created = buildWebhookPayload(record);
    const edited = JSON.parse(webhookEditBody(record.meta.message)!);
    expect(edited.content).toBe(created.content);
    expect(edited.content).toHaveLength(PAYLOAD_LIMITS.content);
    expect(edited.embeds).toEqual(created.embeds);
  });
});
