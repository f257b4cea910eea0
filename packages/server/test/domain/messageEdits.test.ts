import { describe, expect, it } from 'vitest';
import { afterUpdate, type Row } from '../../src/domain/lifecycle.ts';
import { decideDelete, decideEdit, EDIT_LIMIT, type LoggedCopy } from '../../src/domain/messageEdits.ts';
import { currentReplyIds, messageRefOf, newMessageIdIssues } from '../../src/domain/messageIds.ts';
import { initialRecord, type Message } from '../../src/domain/record.ts';
import { applyUpdate, type UpdateParams } from '../../src/domain/update.ts';

const HOOK_A = 'https://chat-a.example.com/api/webhooks/1/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

function update(row: Row, params: UpdateParams, now = 1000): Row {
  const outcome = applyUpdate(JSON.stringify(row.record), params, { allowPrivateWebhooks: false });
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.issues));
  return afterUpdate(row, outcome.record, params.trigger, now).row;
}

/** chat_a (webhook, selfuse), chat_c and chat_d bridged at 0; chat_c's message 1 pending for a and d. */
function withMessage(): Row & { version: number } {
  let row: Row = { record: initialRecord(), state: { seq: 0, pendingSince: null, queue: [] } };
  row = update(row, { channel_chat_a: 'a-0', webhook_chat_a: HOOK_A, selfuse: true, channel_chat_c: 'c-0000', channel_chat_d: 'd-0000' });
  row = update(row, { sender: 'chat_c', sender_channel: 'c-0000', message_content: 'hello', trigger: true });
  return { ...row, version: 7 };
}

const logged = (row: Row, over: Partial<LoggedCopy> = {}): LoggedCopy => ({
  number: 1,
  sender: 'chat_c',
  senderChannel: 'c-0000',
  message: JSON.stringify(row.record.meta.message),
  edits: 0,
  deletedAt: null,
  ids: { chat_c: 'c-1', chat_a: 'a-1' },
  ...over,
});

const context = { now: 5000, messageTtlMs: 60_000, webhookEditBody: (m: Message) => JSON.stringify({ content: m.content }) };

describe('decideEdit', () => {
  it('when the sender edits, then the log gets the new text, the event names every copy and the webhook copy is edited after its create', () => {
    const row = withMessage();
    const d = decideEdit('chat_c', row, 7, logged(row), { message_content: 'edited' }, context);
    expect(d.result).toMatchObject({ kind: 'ok', edits: 1 });
    expect(d.write?.messages?.rewrite).toMatchObject({ number: 1, deleted: false, at: 5000 });
    expect(JSON.parse(d.write!.messages!.rewrite!.message).content).toBe('edited');
    expect(JSON.parse(d.write!.event!.json)).toMatchObject({
      number: 1,
      ids: { chat_c: 'c-1', chat_a: 'a-1' },
      edits: 1,
      message: { content: 'edited' },
    });
    expect(d.write?.deliveries).toEqual([
      { kind: 'edit', number: 1, platform: 'chat_a', url: HOOK_A, payload: '{"content":"edited"}', expiresAt: 65_000 },
    ]);
    // The record shows the newest message, still pending: it shows the edit too.
    expect(d.write?.record.meta.message.content).toBe('edited');
    expect(d.write?.state).toBe(row.state);
  });

  it('when another platform edits, or the message was deleted, or edited the most times, then nothing is written', () => {
    const row = withMessage();
    expect(decideEdit('chat_d', row, 7, logged(row), { message_content: 'x' }, context)).toEqual({
      result: expect.objectContaining({ kind: 'forbidden' }),
    });
    expect(decideEdit(undefined, row, 7, logged(row, { deletedAt: 1 }), { message_content: 'x' }, context)).toEqual({
      result: { kind: 'deleted' },
    });
    expect(decideEdit(undefined, row, 7, logged(row, { edits: EDIT_LIMIT }), { message_content: 'x' }, context)).toEqual({
      result: { kind: 'edit limit', limit: EDIT_LIMIT },
    });
    expect(decideEdit(undefined, row, 7, logged(row), {}, context).result).toMatchObject({ kind: 'invalid' });
  });

  it('when the endpoint changed since the message was read, then the decision is to read it again', () => {
    const row = withMessage();
    expect(decideEdit('chat_c', row, 6, logged(row), { message_content: 'x' }, context)).toEqual({ result: { kind: 'stale' } });
    expect(decideEdit('chat_c', undefined, 7, logged(row), { message_content: 'x' }, context)).toEqual({ result: { kind: 'gone' } });
  });
});

describe('decideDelete', () => {
  it('when a pending message is deleted, then no platform gets it, the log keeps no text and the webhook copy is deleted', () => {
    const row = withMessage();
    const d = decideDelete('chat_c', row, 7, logged(row), context);
    expect(d.result).toEqual({ kind: 'ok', deletedAt: 5000, changed: true });
    expect(d.write?.messages?.settle).toEqual([{ number: 1, unread: 0, expired: 0 }]);
    expect(JSON.parse(d.write!.messages!.rewrite!.message).content).toBeNull();
    expect(d.write?.state.queue).toEqual([]);
    expect(d.write?.record.meta.trigger).toBe(false);
    expect(d.write?.deliveries?.map((x) => [x.kind, x.platform, x.number])).toEqual([['delete', 'chat_a', 1]]);
    expect(JSON.parse(d.write!.event!.json)).toMatchObject({ number: 1, ids: { chat_c: 'c-1' } });
  });

  it('when a deleted message is deleted again, then nothing changes', () => {
    const row = withMessage();
    expect(decideDelete('chat_c', row, 7, logged(row, { deletedAt: 42 }), context)).toEqual({
      result: { kind: 'ok', deletedAt: 42, changed: false },
    });
  });
});

describe('naming messages and their IDs', () => {
  it('names a message by number or by platform and ID, exactly one way', () => {
    expect(messageRefOf({ number: 3 })).toEqual({ ok: true, ref: { number: 3 } });
    expect(messageRefOf({ platform: 'chat_a', message_id: 'a-1' })).toEqual({ ok: true, ref: { platform: 'chat_a', id: 'a-1' } });
    expect(messageRefOf({ number: 3, platform: 'chat_a', message_id: 'a-1' })).toMatchObject({ ok: false });
    expect(messageRefOf({ platform: 'chat_a' })).toMatchObject({ ok: false, issues: [{ parameter: 'message_id' }] });
    expect(messageRefOf({})).toMatchObject({ ok: false, issues: [{ parameter: 'number' }] });
  });

  it('takes a sender ID or reply target only with a new message of a named sender', () => {
    expect(newMessageIdIssues({ message_id: 'c-1', trigger: true, sender: 'chat_c' })).toEqual([]);
    expect(newMessageIdIssues({ message_id: 'c-1', sender: 'chat_c' }).map((i) => i.parameter)).toEqual(['message_id']);
    expect(newMessageIdIssues({ message_reply_to: 'c-1', trigger: true }).map((i) => i.parameter)).toEqual(['message_reply_to']);
  });
});

describe("a native reply's target, as the log knows it now", () => {
  it('when copies of the target were made or reported after the reply was accepted, then the reply names them, the newest report first', () => {
    expect(currentReplyIds({ chat_c: 'c-1', chat_a: 'a-old' }, { ids: { chat_a: 'a-1', chat_d: 'd-1' }, deletedAt: null })).toEqual({
      chat_a: 'a-1',
      chat_c: 'c-1',
      chat_d: 'd-1',
    });
  });

  it('when the target is past retention or was deleted, then the reply keeps the IDs it was accepted with', () => {
    expect(currentReplyIds({ chat_c: 'c-1' }, undefined)).toEqual({ chat_c: 'c-1' });
    expect(currentReplyIds({ chat_c: 'c-1' }, { ids: { chat_a: 'a-1' }, deletedAt: 5 })).toEqual({ chat_c: 'c-1' });
    expect(currentReplyIds(undefined, undefined)).toEqual({});
  });
});
