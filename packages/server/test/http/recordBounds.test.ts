// The bounds of what a record holds, through HTTP: text parameters refuse control characters, and an
// update that would take the record past its size budget is refused; either way nothing is applied.
import { readFileSync } from 'node:fs';
import { bundledSpecPath } from '@chatbridge/api';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { initialRecord } from '../../src/domain/record.ts';
import { RECORD_BUDGET_BYTES } from '../../src/domain/recordBudget.ts';
import { MESSAGE_ID } from '../../src/domain/messageIds.ts';
import { NO_CONTROL_CHARACTERS_PATTERN } from '../../src/domain/text.ts';
import { type Harness, raw, useServer } from './harness.ts';

const h = useServer();
const HOOK = 'https://chat-a.example.com/api/webhooks/1/abcdefghijklmnopqrstuvwxyz0123456789';

/** A valid value of each text parameter of updateEndpoint, with `%s` where a character goes in. */
const TEXT_PARAMETERS: Record<string, string> = {
  allowed_ids: 'user-%s-1',
  blacklist: 'word%s',
  channel_chat_a: 'chan%s-a',
  channel_chat_b: 'chan%s-b',
  channel_chat_c: 'chan%s-c',
  channel_chat_d: 'chan%s-d',
  log_chat_a: 'log%s-a',
  log_chat_b: 'log%s-b',
  log_chat_c: 'log%s-c',
  log_chat_d: 'log%s-d',
  message_attachments: 'https://cdn.example.com/a%s.png',
  message_author_avatar: 'https://cdn.example.com/avatars/0123456789/abcdef%s0123456789.png',
  message_author_id: 'user%s-1',
  message_author_name: 'Ada%s',
  message_content: 'hello%s',
  message_embed: '{"title":"t%s"}',
  message_reply_author: 'Grace%s',
  message_reply_message: 'hi%s',
  sender_channel: 'channel-c-%s-1234',
  webhook_chat_a: `${HOOK}%s`,
  webhook_chat_b: `${HOOK.replace('chat-a', 'chat-b')}%s`,
  webhook_chat_c: `${HOOK}%s`,
  webhook_chat_d: `${HOOK}%s`,
};

async function update(id: string, token: string, query: string, on: Harness = h) {
  return raw(`${on.server.url}/update/${id}?token=${token}&${query}`, { method: 'POST' });
}

describe('updateEndpoint: control characters', () => {
  it('when a text parameter holds a control character, then 400 naming it, and nothing else of the request is applied', async () => {
    const { id, token } = await h.endpoint();
    const before = await h.client.getEndpoint(id, token);
    for (const [name, template] of Object.entries(TEXT_PARAMETERS)) {
      for (const control of ['%00', '%01', '%08', '%0B', '%0C', '%1B', '%1F']) {
        const value = template.replace('%s', control);
        const r = await update(id, token, `beta=true&${name}=${value}`);
        expect(r.status, `${name}=${value}`).toBe(400);
        expect(r.type).toMatch(/^application\/problem\+json/);
        expect(r.body.errors, `${name}=${value}`).toEqual([
          { parameter: name, in: 'query', message: expect.stringMatching(/control characters/) },
        ]);
      }
    }
    expect(await h.client.getEndpoint(id, token)).toEqual(before);
  });

  it('when a text parameter holds tab, line feed or carriage return, then it is accepted as sent', async () => {
    const { id, token } = await h.endpoint();
    const r = await update(id, token, 'message_content=a%09b%0Ac%0D%0Ad&message_reply_message=x%09y');
    expect(r.status).toBe(200);
    expect(r.body.meta.message.content).toBe('a\tb\nc\r\nd');
  });

  it('when the embed spells a control character as a JSON escape, then 400 naming message_embed, and nothing is applied', async () => {
    const { id, token } = await h.endpoint();
    for (const embed of ['{"title":"a\\u0000b"}', '{"fields":[{"name":"n","value":"\\u001b[31m"}]}']) {
      const r = await update(id, token, `message_content=applied&message_embed=${encodeURIComponent(embed)}`);
      expect(r.status, embed).toBe(400);
      expect(r.body.errors).toEqual([{ parameter: 'message_embed', in: 'query', message: expect.stringMatching(/control characters/) }]);
    }
    expect((await h.client.getEndpoint(id, token)).meta.message.content).toBeNull();
    const ok = await update(id, token, `message_embed=${encodeURIComponent('{"description":"line\\nbreak\\ttab"}')}`);
    expect(ok.status).toBe(200);
    expect(ok.body.meta.message.embed.description).toBe('line\nbreak\ttab');
  });

  it('when the spec is read, then every text parameter of updateEndpoint carries the pattern the server names', () => {
    const spec = parseYaml(readFileSync(bundledSpecPath, 'utf8')) as {
      paths: Record<string, { post?: { operationId?: string; parameters?: { $ref?: string }[] } }>;
      components: {
        parameters: Record<string, { name: string; in: string; schema: { type?: string; pattern?: string; enum?: unknown[] } }>;
      };
    };
    const operation = Object.values(spec.paths).find((p) => p.post?.operationId === 'updateEndpoint')!.post!;
    const text = operation
      .parameters!.map((p) => spec.components.parameters[p.$ref!.split('/').pop()!]!)
      .filter((p) => p.in === 'query' && p.schema.type === 'string' && !p.schema.enum && p.name !== 'token');
    // A message ID's pattern is stricter still: printable ASCII only (domain/messageIds.ts).
    const ids = ['message_id', 'message_reply_to'];
    expect(text.map((p) => p.name).sort()).toEqual([...Object.keys(TEXT_PARAMETERS), ...ids].sort());
    for (const p of text) expect(p.schema.pattern, p.name).toBe(ids.includes(p.name) ? MESSAGE_ID.source : NO_CONTROL_CHARACTERS_PATTERN);
  });
});

describe('updateEndpoint: the record size budget', () => {
  // No update can make a record this large out of valid values (every list full of 4-byte characters
  // is about 1.23 MB); one comes from a store written another way, such as an import of older data,
  // whose values the spec's record schema may not accept. Served as production serves it: without
  // checking responses against the spec.
  const h = useServer({ validateResponses: false });

  /** Puts a record 100 bytes under the budget into the store directly: no request could write one that large. */
  async function nearlyFull(id: string) {
    const record = initialRecord();
    const base = JSON.stringify(record).length + 2;
    record.config.blacklist = ['x'.repeat(RECORD_BUDGET_BYTES - 100 - base)];
    await h.server.store.endpoints.update(id, (cur) => ({ write: { record, state: cur!.state }, result: undefined }));
    return (await h.server.store.endpoints.get(id))!;
  }

  it('when an update would take the record past its budget, then 400 naming the budget, and nothing is applied', async () => {
    const { id, token } = await h.endpoint();
    const before = await nearlyFull(id);
    const r = await update(id, token, `blacklist=${'y'.repeat(200)}&message_author_name=Ada&trigger=true&sender=chat_c`, h);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([
      { parameter: 'blacklist', in: 'query', message: expect.stringContaining(`budget of ${RECORD_BUDGET_BYTES} bytes`) },
    ]);
    const after = (await h.server.store.endpoints.get(id))!;
    expect(after.version).toBe(before.version);
    expect(after.recordJson).toBe(before.recordJson);
    expect(await h.server.store.deliveries.count()).toBe(0);
    // What still fits is applied.
    const small = await update(id, token, 'message_author_name=Ada', h);
    expect(small.status).toBe(200);
    expect(small.body.meta.message.author.name).toBe('Ada');
  });
});
