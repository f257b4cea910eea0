import { describe, expect, it } from 'vitest';
import {
  afterUpdate,
  decideMarkRead,
  expireMessages,
  isExpired,
  markRead,
  planDeliveries,
  resetToIdle,
  type Row,
  stillUnread,
} from '../../src/domain/lifecycle.ts';
import type { Platform } from '../../src/domain/record.ts';
import { initialRecord } from '../../src/domain/record.ts';
import { applyUpdate, type UpdateParams } from '../../src/domain/update.ts';

const HOOK_A = 'https://chat-a.example.com/api/webhooks/1/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const HOOK_B = 'https://chat-b.example.com/hooks/1/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';

/** Applies an update as the handler does: rules, then lifecycle. */
function update(row: Row, params: UpdateParams, now = 1000): Row {
  const outcome = applyUpdate(JSON.stringify(row.record), params, { allowPrivateWebhooks: false });
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.issues));
  return afterUpdate(row, outcome.record, params.trigger, now).row;
}

/** markRead's row (the log writes aside). */
const mark = (row: Row, platform: Platform, number?: number): Row => markRead(row, platform, number).row;

const idle = (): Row => ({ record: initialRecord(), state: { seq: 0, pendingSince: null, queue: [] } });

/** The queued messages as (number, unread platform mask) pairs. */
const queued = (row: Row) => row.state.queue.map((m) => [m.n, m.u]);

/** A bridge at index 0 over chat_a, chat_b and chat_c, with webhooks for a and b. */
function bridged(selfuse = true): Row {
  let row = update(idle(), { channel_chat_a: 'a-0', webhook_chat_a: HOOK_A, selfuse });
  row = update(row, { channel_chat_b: 'b-0000', webhook_chat_b: HOOK_B });
  return update(row, { channel_chat_c: 'c-0000-chan' });
}

const message = (row: Row, sender: 'chat_a' | 'chat_b' | 'chat_c', channel: string, now = 1000) =>
  update(row, { sender, sender_channel: channel, message_content: 'hello', message_author_name: 'Ada', trigger: true }, now);

describe('lifecycle', () => {
  it('when trigger=true, then the message is queued with the next number and appended to the log', () => {
    const before = bridged();
    const outcome = applyUpdate(
      JSON.stringify(before.record),
      { sender: 'chat_c', sender_channel: 'c-0000-chan', message_content: 'hello', trigger: true },
      { allowPrivateWebhooks: false },
    );
    if (!outcome.ok) throw new Error('invalid');
    const { row, messages } = afterUpdate(before, outcome.record, true, 5000);
    const text = JSON.stringify(outcome.record.meta.message);
    // chat_a (1) and chat_b (2) have to read it; chat_c sent it, chat_d has no channels.
    expect(row.state).toEqual({ seq: 1, pendingSince: 5000, queue: [{ n: 1, u: 3, at: 5000, b: Buffer.byteLength(text), s: 'chat_c' }] });
    expect(row.record.meta.read).toEqual({ chat_a: false, chat_b: false, chat_c: true, chat_d: true });
    expect(messages).toEqual({
      append: { number: 1, sender: 'chat_c', senderChannel: 'c-0000-chan', message: text, unread: 3, createdAt: 5000 },
    });
  });

  it('when every platform marks read, then the record resets to idle and config is kept', () => {
    let row = message(bridged(), 'chat_c', 'c-0000-chan');
    row = mark(row, 'chat_a');
    expect(row.record.meta.trigger).toBe(true);
    expect(row.record.meta.read.chat_a).toBe(true);
    row = mark(row, 'chat_b');
    expect(row.record.meta).toEqual(initialRecord().meta);
    expect(row.state).toEqual({ seq: 1, pendingSince: null, queue: [] });
    expect(row.record.config).toEqual(bridged().record.config);
  });

  it('when a message has nowhere to go (no other platform has channels), then it is finished at once', () => {
    const row = update(update(idle(), { channel_chat_d: 'chan-d-1' }), { sender: 'chat_d', trigger: true, message_content: 'x' });
    expect(row.record.meta).toEqual(initialRecord().meta);
    expect(row.state).toEqual({ seq: 1, pendingSince: null, queue: [] });
  });

  it('when idle, then markRead changes nothing and marks nothing', () => {
    const row = bridged();
    const result = markRead(row, 'chat_a');
    expect(result.row).toBe(row);
    expect(result.marked).toBeUndefined();
    expect(result.messages).toBeUndefined();
  });

  it('when a new message arrives while one is pending, then both are queued in order and the record shows the newer', () => {
    const first = mark(message(bridged(), 'chat_c', 'c-0000-chan', 1000), 'chat_a');
    const second = message(first, 'chat_b', 'b-0000', 2000);
    expect(second.state.seq).toBe(2);
    // The older message keeps its place (chat_b has still to read it) and its time.
    expect(second.state.pendingSince).toBe(1000);
    expect(queued(second)).toEqual([
      [1, 2],
      [2, 5],
    ]);
    expect(second.record.meta.read).toEqual({ chat_a: false, chat_b: true, chat_c: false, chat_d: true });
    expect(second.record.meta.sender).toBe('chat_b');
  });

  it('when a platform marks without a number, then the oldest message it has not read is marked, and the queue moves on', () => {
    let row = message(bridged(), 'chat_c', 'c-0000-chan', 1000);
    row = message(row, 'chat_c', 'c-0000-chan', 2000);
    const first = markRead(row, 'chat_a');
    expect(first.marked).toBe(1);
    expect(first.messages).toEqual({ settle: [{ number: 1, unread: 2, expired: 0 }] });
    // The record shows message 2, which chat_a has not read yet.
    expect(first.row.record.meta.read.chat_a).toBe(false);
    const second = markRead(first.row, 'chat_a');
    expect(second.marked).toBe(2);
    expect(second.row.record.meta.read.chat_a).toBe(true);
    expect(queued(second.row)).toEqual([
      [1, 2],
      [2, 2],
    ]);
    // chat_b reads both (the newest first): the endpoint is idle only once the older one is read too.
    row = mark(second.row, 'chat_b', 2);
    expect(row.record.meta.trigger).toBe(true);
    expect(row.state.pendingSince).toBe(1000);
    row = mark(row, 'chat_b', 1);
    expect(row.record.meta).toEqual(initialRecord().meta);
    expect(row.state.queue).toEqual([]);
  });

  it('when a platform marks a message it has read already, then nothing changes (idempotent)', () => {
    const row = mark(message(bridged(), 'chat_c', 'c-0000-chan'), 'chat_a', 1);
    const again = markRead(row, 'chat_a', 1);
    expect(again.row).toBe(row);
    expect(again.marked).toBeUndefined();
  });

  it('decideMarkRead: a number never issued is refused; one already read is answered without a write', () => {
    const row = mark(message(bridged(), 'chat_c', 'c-0000-chan'), 'chat_a', 1);
    expect(decideMarkRead(row, 'chat_a', 2)).toEqual({ result: { kind: 'no such message', newest: 1 } });
    expect(decideMarkRead(row, 'chat_a', 0)).toEqual({ result: { kind: 'no such message', newest: 1 } });
    expect(decideMarkRead(row, 'chat_a', 1)).toEqual({ result: { kind: 'ok', row } });
    const marked = decideMarkRead(row, 'chat_b', 1);
    expect(marked.write?.messages).toEqual({ settle: [{ number: 1, unread: 0, expired: 0 }] });
    expect(marked.write?.state.queue).toEqual([]);
  });

  it("when trigger=false ends pending messages, then every unread one is withdrawn (expired), the endpoint is idle with initial message fields, and then the request's own fields apply", () => {
    let pending = mark(message(bridged(), 'chat_c', 'c-0000-chan'), 'chat_a');
    pending = message(pending, 'chat_c', 'c-0000-chan', 2000);
    const outcome = applyUpdate(JSON.stringify(pending.record), { trigger: false }, { allowPrivateWebhooks: false });
    if (!outcome.ok) throw new Error('invalid');
    const { row: ended, messages } = afterUpdate(pending, outcome.record, false, 3000);
    expect(messages).toEqual({
      settle: [
        { number: 1, unread: 0, expired: 2 },
        { number: 2, unread: 0, expired: 3 },
      ],
    });
    expect(ended.state).toEqual({ seq: 2, pendingSince: null, queue: [] });
    expect(ended.record.meta).toEqual(initialRecord().meta);
    expect(ended.record.config).toEqual(pending.record.config);
    const endedWithText = update(pending, { trigger: false, message_content: 'for the next one' });
    expect(endedWithText.record.meta.message).toEqual({ ...initialRecord().meta.message, content: 'for the next one' });
  });

  it("when a new message follows a pending one, then nothing of the old message's fields is carried over", () => {
    const first = update(bridged(), {
      sender: 'chat_c',
      sender_channel: 'c-0000-chan',
      message_content: 'first',
      message_author_name: 'Ada',
      message_author_id: 'ada-12345',
      message_attachments: 'https://cdn.example.com/first.png',
      message_embed: JSON.stringify({ title: 'old embed' }),
      message_reply: true,
      message_reply_author: 'Grace',
      message_reply_message: 'quoted',
      trigger: true,
    });
    const second = update(first, { sender: 'chat_b', sender_channel: 'b-0000', message_content: 'second', trigger: true }, 2000);
    expect(second.record.meta.message).toEqual({ ...initialRecord().meta.message, content: 'second' });
    expect(second.state).toMatchObject({ seq: 2, pendingSince: 1000 });
    expect(queued(second)).toEqual([
      [1, 3],
      [2, 5],
    ]);
    expect(planDeliveries(second, 9000, (r) => JSON.stringify(r.meta.message.attachments))).toEqual([
      expect.objectContaining({ platform: 'chat_a', payload: '[]' }),
    ]);
  });

  it('when message fields are set while idle, then the next message keeps them (a bot may set them first and trigger after)', () => {
    const prepared = update(bridged(), { message_content: 'prepared', message_author_name: 'Ada' });
    const sent = update(prepared, { sender: 'chat_c', sender_channel: 'c-0000-chan', trigger: true });
    expect(sent.record.meta.message).toMatchObject({ content: 'prepared', author: { name: 'Ada' } });
  });

  it('when message_reply=false, then the reply members are cleared unless the request sets them', () => {
    const reply = update(bridged(), { message_reply: true, message_reply_author: 'Grace', message_reply_message: 'quoted' });
    expect(update(reply, { message_reply: false }).record.meta.message).toMatchObject({
      isReply: false,
      reply: { author: null, message: null },
    });
    expect(update(reply, { message_reply: false, message_reply_message: 'kept' }).record.meta.message.reply).toEqual({
      author: null,
      message: 'kept',
    });
  });

  it('expires the oldest unread message once its TTL has passed', () => {
    const row = message(bridged(), 'chat_c', 'c-0000-chan', 1000);
    expect(isExpired(row, 30_999, 30_000)).toBe(false);
    expect(isExpired(row, 31_000, 30_000)).toBe(true);
    expect(resetToIdle(row).record.meta).toEqual(initialRecord().meta);
  });

  it('when the TTL passes, then only the messages older than it are given up; the endpoint is idle once none is left', () => {
    let row = message(bridged(), 'chat_c', 'c-0000-chan', 1000);
    row = message(row, 'chat_c', 'c-0000-chan', 20_000);
    const early = expireMessages(row, { now: 31_000, ttlMs: 30_000 });
    expect(early.expired).toEqual([{ number: 1, platforms: ['chat_a', 'chat_b'] }]);
    expect(early.messages).toEqual({ settle: [{ number: 1, unread: 0, expired: 3 }] });
    expect(early.row.state).toEqual({ seq: 2, pendingSince: 20_000, queue: [expect.objectContaining({ n: 2, u: 3 })] });
    expect(early.row.record.meta.trigger).toBe(true);
    const late = expireMessages(early.row, { now: 50_000, ttlMs: 30_000 });
    expect(late.expired).toEqual([{ number: 2, platforms: ['chat_a', 'chat_b'] }]);
    expect(late.row.record.meta).toEqual(initialRecord().meta);
    expect(late.row.state.queue).toEqual([]);
    expect(expireMessages(late.row, { now: 90_000, ttlMs: 30_000 })).toEqual({ row: late.row, expired: [] });
  });

  it("when one platform's copy of a message is given up, then the other platforms still have it to read", () => {
    const row = message(bridged(), 'chat_c', 'c-0000-chan', 1000);
    const given = expireMessages(row, { number: 1, platform: 'chat_a' });
    expect(given.expired).toEqual([{ number: 1, platforms: ['chat_a'] }]);
    expect(given.messages).toEqual({ settle: [{ number: 1, unread: 2, expired: 1 }] });
    expect(stillUnread(given.row.state, 1, 'chat_a')).toBe(false);
    expect(stillUnread(given.row.state, 1, 'chat_b')).toBe(true);
    // The record shows message 1, which chat_a no longer has to relay.
    expect(given.row.record.meta.read).toMatchObject({ chat_a: true, chat_b: false });
  });
});

describe('planDeliveries', () => {
  const payload = () => '{}';

  it('when a self-user message comes from chat_c, then both webhook platforms get the webhook of that bridge', () => {
    const row = message(bridged(), 'chat_c', 'c-0000-chan');
    expect(planDeliveries(row, 9000, payload)).toEqual([
      { platform: 'chat_a', url: HOOK_A, payload: '{}', expiresAt: 9000 },
      { platform: 'chat_b', url: HOOK_B, payload: '{}', expiresAt: 9000 },
    ]);
  });

  it('when the sender is a webhook platform, then only the other one is delivered to', () => {
    const row = message(bridged(), 'chat_a', 'a-0');
    expect(planDeliveries(row, 9000, payload).map((d) => d.platform)).toEqual(['chat_b']);
  });

  it('when the bridge index is 1, then the webhooks at index 1 are used', () => {
    let row = bridged();
    row = update(row, { channel_chat_a: 'a-1', webhook_chat_a: `${HOOK_A}-1` });
    row = update(row, { channel_chat_c: 'c-1111-chan' });
    const plan = planDeliveries(message(row, 'chat_c', 'c-1111-chan'), 9000, payload);
    expect(plan).toEqual([expect.objectContaining({ platform: 'chat_a', url: `${HOOK_A}-1` })]);
  });

  it('when self-user is off, or the sender channel is not bridged, then nothing is delivered', () => {
    expect(planDeliveries(message(bridged(false), 'chat_c', 'c-0000-chan'), 9000, payload)).toEqual([]);
    expect(planDeliveries(message(bridged(), 'chat_c', 'unknown-channel'), 9000, payload)).toEqual([]);
  });
});
