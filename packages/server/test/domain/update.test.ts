import { describe, expect, it } from 'vitest';
import { initialRecord, type EndpointRecord } from '../../src/domain/record.ts';
import { applyUpdate, type UpdateParams } from '../../src/domain/update.ts';

const policy = { allowPrivateWebhooks: false };
const HOOK_A1 = 'https://chat-a.example.com/api/webhooks/1111/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const HOOK_A2 = 'https://chat-a.example.com/api/webhooks/2222/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';

function apply(params: UpdateParams, record: EndpointRecord = initialRecord()) {
  const outcome = applyUpdate(JSON.stringify(record), params, policy);
  if (!outcome.ok) throw new Error(`unexpected issues: ${JSON.stringify(outcome.issues)}`);
  return outcome.record;
}

function issuesOf(params: UpdateParams, record: EndpointRecord = initialRecord(), p = policy) {
  const outcome = applyUpdate(JSON.stringify(record), params, p);
  if (outcome.ok) throw new Error('expected the update to be rejected');
  return outcome.issues;
}

describe('applyUpdate: lists', () => {
  it('when a channel is sent, then it is appended to that platform', () => {
    const r = apply({ channel_chat_b: 'channel-b-1' });
    expect(r.config.channels.chat_b).toEqual(['channel-b-1']);
    expect(r.config.channels.chat_a).toEqual([]);
  });

  it('when a value already present is sent again, then the list is unchanged and no error', () => {
    const once = apply({ channel_chat_c: 'chan-c1' });
    const outcome = applyUpdate(JSON.stringify(once), { channel_chat_c: 'chan-c1' }, policy);
    expect(outcome).toMatchObject({ ok: true, changed: false });
    expect(outcome.ok && outcome.record.config.channels.chat_c).toEqual(['chan-c1']);
  });

  it('when blacklist words are comma-separated, then each trimmed word is its own element, case-insensitively unique', () => {
    const r = apply({ blacklist: ' Spam , scam,,SPAM, ham ' });
    expect(r.config.blacklist).toEqual(['Spam', 'scam', 'ham']);
    expect(apply({ blacklist: 'HAM' }, r).config.blacklist).toEqual(['Spam', 'scam', 'ham']);
  });

  it('when a comma list of allowed_ids holds an ID outside 5..50 characters, then it is rejected naming it', () => {
    expect(issuesOf({ allowed_ids: 'a,b,c' })).toEqual([
      { parameter: 'allowed_ids', in: 'query', message: "each ID must be 5 to 50 characters ('a' has 1)" },
    ]);
    expect(issuesOf({ allowed_ids: `id-001,${'x'.repeat(51)}` })[0]?.message).toContain('has 51');
    expect(apply({ allowed_ids: `🎉🎉🎉🎉🎉,${'y'.repeat(50)}` }).config['allowed-ids']).toEqual(['🎉🎉🎉🎉🎉', 'y'.repeat(50)]);
  });

  it('when allowed_ids are comma-separated, then each trimmed ID is appended once', () => {
    expect(apply({ allowed_ids: 'id-001, id-002,id-001' }).config['allowed-ids']).toEqual(['id-001', 'id-002']);
  });

  it('when a comma list holds only separators, then it is rejected', () => {
    expect(issuesOf({ blacklist: ' , ,' })).toEqual([expect.objectContaining({ parameter: 'blacklist' })]);
  });

  it('when a list is full, then the append is rejected', () => {
    const r = initialRecord();
    r.config.channels.chat_d = Array.from({ length: 50 }, (_, i) => `chan-d-${i}`);
    expect(issuesOf({ channel_chat_d: 'one-more' }, r)).toEqual([expect.objectContaining({ parameter: 'channel_chat_d' })]);
  });
});

describe('applyUpdate: index', () => {
  const bridged = () => apply({ channel_chat_a: 'a-0' }, apply({ channel_chat_a: 'a-1' }, apply({ channel_chat_a: 'a-2' })));

  it('when index is given, then every list parameter overwrites that position, keeping bridges aligned', () => {
    const base = apply({ webhook_chat_a: HOOK_A1 }, apply({ channel_chat_a: 'a-0' }));
    const r = apply({ index: 0, channel_chat_a: 'a-new', webhook_chat_a: HOOK_A2 }, base);
    expect(r.config.channels.chat_a).toEqual(['a-new']);
    expect(r.config.webhooks.chat_a).toEqual([HOOK_A2]);
  });

  it('when the index is beyond the list, then it is rejected naming index', () => {
    expect(issuesOf({ index: 3, channel_chat_a: 'x' }, bridged())).toEqual([expect.objectContaining({ parameter: 'index' })]);
  });

  it('when index comes with no list parameter, then it is rejected', () => {
    expect(issuesOf({ index: 0, message_content: 'hi' })).toEqual([expect.objectContaining({ parameter: 'index' })]);
  });

  it('when index comes with a comma list, then it is rejected', () => {
    const r = apply({ blacklist: 'one' });
    expect(issuesOf({ index: 0, blacklist: 'two,three' }, r)).toEqual([expect.objectContaining({ parameter: 'blacklist' })]);
  });

  it('when the value already stands at another position, then it is rejected', () => {
    expect(issuesOf({ index: 0, channel_chat_a: 'a-1' }, bridged())).toEqual([expect.objectContaining({ parameter: 'channel_chat_a' })]);
  });
});

describe('applyUpdate: webhooks', () => {
  it('when a webhook carries credentials or an address literal that is not public, then it is rejected naming it', () => {
    const cases: [string, string][] = [
      ['https://user:pw@chat-a.example.com/api/webhooks/1/abc', 'must not carry a user name or password'],
      [
        'https://127.0.0.1/api/webhooks/1/abcdefghijklmnop',
        'must not point at a non-public address (loopback): only public addresses receive webhooks',
      ],
      [
        'https://[::1]/api/webhooks/1/abcdefghijklmnop',
        'must not point at a non-public address (loopback): only public addresses receive webhooks',
      ],
      [
        'https://169.254.169.254/latest/meta-data/aaaaaa',
        'must not point at a non-public address (linkLocal): only public addresses receive webhooks',
      ],
      [
        'https://10.1.2.3/api/webhooks/1/abcdefghijklmnop',
        'must not point at a non-public address (private): only public addresses receive webhooks',
      ],
    ];
    for (const [hook, message] of cases) {
      expect(issuesOf({ webhook_chat_a: hook })).toEqual([{ parameter: 'webhook_chat_a', in: 'query', message }]);
    }
    // A public address literal is fine, and the operator's development switch allows the others.
    expect(apply({ webhook_chat_a: 'https://93.184.216.34/api/webhooks/1/abcdefghijklmnop' }).config.webhooks.chat_a).toHaveLength(1);
    const local = applyUpdate(
      JSON.stringify(initialRecord()),
      { webhook_chat_b: 'http://127.0.0.1:8080/hook-receiver' },
      { allowPrivateWebhooks: true },
    );
    expect(local.ok).toBe(true);
  });

  it('when a webhook is not https, then it is rejected unless the operator allows http', () => {
    const http = 'http://chat-a.example.com/api/webhooks/1111/aaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    expect(issuesOf({ webhook_chat_a: http })).toEqual([expect.objectContaining({ parameter: 'webhook_chat_a' })]);
    const ok = applyUpdate(JSON.stringify(initialRecord()), { webhook_chat_a: http }, { allowPrivateWebhooks: true });
    expect(ok.ok && ok.record.config.webhooks.chat_a).toEqual([http]);
  });

  it('when a URL is written in a form only a lenient parser completes, then it is rejected and nothing applied', () => {
    const path = 'chat-a.example.com/api/webhooks/1111/aaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    for (const hook of [
      `https:${path}`,
      `https:/${path}`,
      `https:\\\\${path}`,
      `https://chat-a.exa\tmple.com/api/webhooks/1111/aaaaaaaaaaaaaaaaaaaa`,
      `https://${path}\n`,
    ]) {
      expect(issuesOf({ webhook_chat_a: hook })).toEqual([
        { parameter: 'webhook_chat_a', in: 'query', message: 'must be an absolute https URL' },
      ]);
    }
    expect(issuesOf({ message_attachments: 'https:cdn.example.com/files/a.png' })).toEqual([
      expect.objectContaining({ parameter: 'message_attachments' }),
    ]);
    // Written out in full, in any letter case of the scheme, the same URLs are taken as sent.
    expect(apply({ webhook_chat_a: `HTTPS://${path}` }).config.webhooks.chat_a).toEqual([`HTTPS://${path}`]);
  });

  it('when an attachment URL holds characters no URL holds as they are, then they are percent-encoded and the rest kept as sent', () => {
    expect(
      apply({ message_attachments: 'https://cdn.example.com/files/a b.png,https://CDN.example.com/a"b<c>`{|}^.png?x=%41' }).meta.message
        .attachments,
    ).toEqual(['https://cdn.example.com/files/a%20b.png', 'https://CDN.example.com/a%22b%3Cc%3E%60%7B%7C%7D%5E.png?x=%41']);
    expect(apply({ message_attachments: 'https://cdn.example.com/a\u0000b\u0001c\u000bd\u007f.png' }).meta.message.attachments).toEqual([
      'https://cdn.example.com/a%00b%01c%0Bd%7F.png',
    ]);
  });

  it.each(['webhook_chat_c', 'webhook_chat_d'] as const)(
    'when %s is sent, then it is ignored and the rest of the request applied',
    (parameter) => {
      const r = apply({ [parameter]: HOOK_A1, channel_chat_c: 'chan-c-1' });
      expect(r.config.webhooks).toEqual({ chat_a: [], chat_b: [], chat_c: [], chat_d: [] });
      expect(r.config.channels.chat_c).toEqual(['chan-c-1']);
      // A list parameter for index, though ignored.
      expect(applyUpdate(JSON.stringify(initialRecord()), { index: 0, [parameter]: HOOK_A1 }, policy).ok).toBe(true);
    },
  );
});

describe('applyUpdate: scalars and message', () => {
  it('when flags are given, then they are set; when absent, unchanged', () => {
    const r = apply({ selfuse: true, beta: true, message_reply: true });
    expect([r.config['self-user'], r.config.isbeta, r.meta.message.isReply]).toEqual([true, true, true]);
    const again = apply({ log_chat_b: 'log-b-1' }, r);
    expect([again.config['self-user'], again.config.isbeta, again.meta.message.isReply]).toEqual([true, true, true]);
    expect(apply({ beta: false }, r).config.isbeta).toBe(false);
  });

  it('when log parameters are sent, then they overwrite the log channel', () => {
    const r = apply({ log_chat_a: 'log-1' });
    expect(apply({ log_chat_a: 'log-2' }, r).config.logs).toEqual({ chat_a: 'log-2', chat_b: null, chat_c: null, chat_d: null });
  });

  it('when message fields are sent, then they overwrite meta.message', () => {
    const r = apply({
      message_author_name: 'Ada',
      message_author_id: 'user-1',
      message_author_avatar: 'https://cdn.example.com/a.png',
      message_content: 'a & b ? c # d % "e" ünï 🎉',
      message_reply_message: 'original',
      message_reply_author: 'Grace',
      message_attachments: 'https://cdn.example.com/1.png, https://cdn.example.com/2.png',
    });
    expect(r.meta.message).toMatchObject({
      author: { name: 'Ada', id: 'user-1', avatar: 'https://cdn.example.com/a.png' },
      content: 'a & b ? c # d % "e" ünï 🎉',
      reply: { message: 'original', author: 'Grace' },
      attachments: ['https://cdn.example.com/1.png', 'https://cdn.example.com/2.png'],
    });
  });

  it('when a comma list of attachments holds a URL under 20 characters, then it is rejected and nothing applied', () => {
    expect(issuesOf({ message_attachments: 'https://a.io/x,https://b.io/y' })).toEqual([
      { parameter: 'message_attachments', in: 'query', message: "each URL must be at least 20 characters ('https://a.io/x' has 14)" },
    ]);
    // Code points, not UTF-16 units: 20 with one outside the BMP is at the bound, 19 is under it.
    expect(apply({ message_attachments: 'https://cdn.example.com/a.png, https://x.io/🎉abcdef' }).meta.message.attachments).toEqual([
      'https://cdn.example.com/a.png',
      'https://x.io/🎉abcdef',
    ]);
    expect(issuesOf({ message_attachments: 'https://cdn.example.com/a.png,https://x.io/🎉abcde' })[0]?.message).toContain('has 19');
  });

  it('when an attachment URL holds a comma, then it stays one URL; a list splits only where the next URL starts', () => {
    expect(apply({ message_attachments: 'https://img.example.com/resize,w_100/photo.png' }).meta.message.attachments).toEqual([
      'https://img.example.com/resize,w_100/photo.png',
    ]);
    expect(
      apply({ message_attachments: 'https://img.example.com/a,b.png, HTTPS://cdn.example.com/c,d.png,http://cdn.example.com/e.png' }).meta
        .message.attachments,
    ).toEqual(['https://img.example.com/a,b.png', 'HTTPS://cdn.example.com/c,d.png', 'http://cdn.example.com/e.png']);
  });

  it('when a list of attachments has a trailing, doubled or blank item, then the extra commas are separators, not part of a URL', () => {
    const a = 'https://cdn.example.com/a.png';
    const b = 'https://cdn.example.com/b.png';
    for (const [value, expected] of [
      [`${a},`, [a]],
      [`${a},,${b}`, [a, b]],
      [`${a}, ,${b}`, [a, b]],
      [`,${a}`, [a]],
      [`${a} , , ${b} ,`, [a, b]],
    ] as const) {
      expect([value, apply({ message_attachments: value }).meta.message.attachments]).toEqual([value, expected]);
    }
  });

  it('when an attachment is not a URL, then it is rejected', () => {
    expect(issuesOf({ message_attachments: 'not a url at all, really' })).toEqual([
      expect.objectContaining({ parameter: 'message_attachments' }),
    ]);
  });

  it('when an embed is sent, then missing members become "None" and fields are normalised', () => {
    const r = apply({ message_embed: JSON.stringify({ title: 'T', fields: [{ name: 'n', value: 'v' }], color: 5 }) });
    expect(r.meta.message.embed).toEqual({
      title: 'T',
      description: 'None',
      footer: 'None',
      image: 'None',
      thumbnail: 'None',
      fields: [{ name: 'n', value: 'v', inline: false }],
    });
  });

  it('when an embed member is empty text, then it is stored as "None", as the seed writes an empty member', () => {
    const r = apply({ message_embed: JSON.stringify({ title: '', footer: '', description: 'd' }) });
    expect(r.meta.message.embed).toMatchObject({ title: 'None', footer: 'None', description: 'd' });
  });

  it('when the embed is empty text, then the message has no embed: every member "None"', () => {
    const withEmbed = apply({ message_embed: JSON.stringify({ title: 'T', fields: [{ name: 'n', value: 'v' }] }) });
    expect(apply({ message_embed: '' }, withEmbed).meta.message.embed).toEqual(initialRecord().meta.message.embed);
  });

  it("when a field's inline is null (Python's None), then it counts as not given", () => {
    const r = apply({ message_embed: JSON.stringify({ fields: [{ name: 'n', value: 'v', inline: null }] }) });
    expect(r.meta.message.embed.fields).toEqual([{ name: 'n', value: 'v', inline: false }]);
  });

  it.each([
    '[1,2]',
    'not json',
    '"text"',
    '{"title": 5}',
    '{"fields": [{"name": 1}]}',
    '{"fields": [{"name": "n", "value": "v", "inline": "yes"}]}',
  ])('when the embed is %s, then it is rejected naming message_embed', (message_embed) => {
    expect(issuesOf({ message_embed })).toEqual([expect.objectContaining({ parameter: 'message_embed' })]);
  });
});

describe('applyUpdate: sender and trigger', () => {
  it('when sender is set, then meta.sender is set and that platform is read', () => {
    const r = apply({ sender: 'chat_b', sender_channel: 'channel-b-12345' });
    expect(r.meta.sender).toBe('chat_b');
    expect(r.meta['sender-channel']).toBe('channel-b-12345');
    expect(r.meta.read).toEqual({ chat_a: false, chat_b: true, chat_c: false, chat_d: false });
  });

  it('when trigger=true, then read is true for the sender and platforms without channels only', () => {
    const configured = apply({ channel_chat_a: 'a-0' }, apply({ channel_chat_b: 'b-000' }, apply({ channel_chat_c: 'c-000' })));
    const r = apply({ sender: 'chat_c', trigger: true }, configured);
    expect(r.meta.trigger).toBe(true);
    expect(r.meta.read).toEqual({ chat_a: false, chat_b: false, chat_c: true, chat_d: true });
  });

  it('when trigger=false, then the flag is cleared', () => {
    expect(apply({ trigger: false }, apply({ trigger: true })).meta.trigger).toBe(false);
  });
});

describe('applyUpdate: all or nothing, only_check', () => {
  it('when one parameter is invalid, then nothing is applied and every problem is named', () => {
    const outcome = applyUpdate(
      JSON.stringify(initialRecord()),
      { channel_chat_a: 'ok', message_embed: '[]', message_attachments: 'not a url at all' },
      policy,
    );
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.issues.map((i) => i.parameter).sort()).toEqual(['message_attachments', 'message_embed']);
  });

  it('when only_check is true, then nothing changes but parameters are still validated', () => {
    const record = initialRecord();
    expect(applyUpdate(JSON.stringify(record), { only_check: true, channel_chat_a: 'x', trigger: true }, policy)).toEqual({
      ok: true,
      record,
      json: JSON.stringify(record),
      changed: false,
    });
    expect(applyUpdate(JSON.stringify(record), { only_check: true, message_embed: 'nope' }, policy).ok).toBe(false);
  });

  it('when nothing is sent, then the record is returned unchanged', () => {
    const record = initialRecord();
    expect(applyUpdate(JSON.stringify(record), {}, policy)).toEqual({ ok: true, record, json: JSON.stringify(record), changed: false });
  });

  it('never mutates its input', () => {
    const record = initialRecord();
    const before = JSON.stringify(record);
    apply({ channel_chat_a: 'x', trigger: true, sender: 'chat_a', blacklist: 'w' }, record);
    expect(JSON.stringify(record)).toBe(before);
  });
});
