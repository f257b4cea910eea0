import { describe, expect, it } from 'vitest';
import { afterUpdate, isExpired, markRead, planDeliveries, resetToIdle, type Row } from '../../src/domain/lifecycle.ts';
import { initialRecord } from '../../src/domain/record.ts';
import { applyUpdate, type UpdateParams } from '../../src/domain/update.ts';

const HOOK_A = 'https://chat-a.example.com/api/webhooks/1/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const HOOK_B = 'https://chat-b.example.com/hooks/1/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';

/** Applies an update as the handler does: rules, then lifecycle. */
function update(row: Row, params: UpdateParams, now = 1000): Row {
  const outcome = applyUpdate(JSON.stringify(row.record), params, { allowPrivateWebhooks: false });
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.issues));
  return afterUpdate(row, outcome.record, params.trigger, now);
}

const idle = (): Row => ({ record: initialRecord(), state: { seq: 0, pendingSince: null } });

/** A bridge at index 0 over chat_a, chat_b and chat_c, with webhooks for a and b. */
function bridged(selfuse = true): Row {
  let row = update(idle(), { channel_chat_a: 'a-0', webhook_chat_a: HOOK_A, selfuse });
  row = update(row, { channel_chat_b: 'b-0000', webhook_chat_b: HOOK_B });
  return update(row, { channel_chat_c: 'c-0000-chan' });
}

const message = (row: Row, sender: 'chat_a' | 'chat_b' | 'chat_c', channel: string, now = 1000) =>
  update(row, { sender, sender_channel: channel, message_content: 'hello', message_author_name: 'Ada', trigger: true }, now);

describe('lifecycle', () => {
  it('when trigger=true, then a new message is pending with the next sequence number', () => {
    const row = message(bridged(), 'chat_c', 'c-0000-chan', 5000);
    expect(row.state).toEqual({ seq: 1, pendingSince: 5000 });
    expect(row.record.meta.read).toEqual({ chat_a: false, chat_b: false, chat_c: true, chat_d: true });
  });

  it('when every platform marks read, then the record resets to idle and config is kept', () => {
    let row = message(bridged(), 'chat_c', 'c-0000-chan');
    row = markRead(row, 'chat_a');
    expect(row.record.meta.trigger).toBe(true);
    row = markRead(row, 'chat_b');
    expect(row.record.meta).toEqual(initialRecord().meta);
    expect(row.state.pendingSince).toBeNull();
    expect(row.record.config).toEqual(bridged().record.config);
  });

  it('when a message has nowhere to go (no other platform has channels), then it is finished at once', () => {
    const row = update(update(idle(), { channel_chat_d: 'chan-d-1' }), { sender: 'chat_d', trigger: true, message_content: 'x' });
    expect(row.record.meta).toEqual(initialRecord().meta);
    expect(row.state).toEqual({ seq: 1, pendingSince: null });
  });

  it('when idle, then markRead changes nothing', () => {
    const row = bridged();
    expect(markRead(row, 'chat_a')).toBe(row);
  });

  it('when a new message arrives while one is pending, then it replaces it with a new sequence number', () => {
    const first = markRead(message(bridged(), 'chat_c', 'c-0000-chan'), 'chat_a');
    const second = message(first, 'chat_b', 'b-0000', 2000);
    expect(second.state).toEqual({ seq: 2, pendingSince: 2000 });
    expect(second.record.meta.read).toEqual({ chat_a: false, chat_b: true, chat_c: false, chat_d: true });
  });

  it("when trigger=false ends a pending message, then the endpoint is idle with initial message fields, and then the request's own fields apply", () => {
    const pending = markRead(message(bridged(), 'chat_c', 'c-0000-chan'), 'chat_a');
    const ended = update(pending, { trigger: false });
    expect(ended.state.pendingSince).toBeNull();
    expect(ended.record.meta).toEqual(initialRecord().meta);
    expect(ended.record.config).toEqual(pending.record.config);
    const endedWithText = update(pending, { trigger: false, message_content: 'for the next one' });
    expect(endedWithText.record.meta.message).toEqual({ ...initialRecord().meta.message, content: 'for the next one' });
  });

  it("when a new message replaces a pending one, then nothing of the old message's fields is carried over", () => {
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
    expect(second.state).toEqual({ seq: 2, pendingSince: 2000 });
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

  it('expires a pending message once its TTL has passed', () => {
    const row = message(bridged(), 'chat_c', 'c-0000-chan', 1000);
    expect(isExpired(row, 30_999, 30_000)).toBe(false);
    expect(isExpired(row, 31_000, 30_000)).toBe(true);
    expect(resetToIdle(row).record.meta).toEqual(initialRecord().meta);
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
