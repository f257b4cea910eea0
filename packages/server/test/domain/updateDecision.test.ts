import { describe, expect, it } from 'vitest';
import { MESSAGE_QUEUE_LIMITS } from '../../src/domain/messageQueue.ts';
import { type EndpointRecord, initialRecord } from '../../src/domain/record.ts';
import type { MessageState } from '../../src/domain/row.ts';
import type { UpdateParams } from '../../src/domain/update.ts';
import { type CommittedRow, decideUpdate, type UpdateContext } from '../../src/domain/updateDecision.ts';

const NOW = 1_700_000_000_000;
const HOOK_A = 'https://chat-a.example.com/api/webhooks/1111/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const context: UpdateContext = {
  allowPrivateWebhooks: false,
  now: NOW,
  messageTtlMs: 30_000,
  webhookBody: (r) => `body of ${r.meta.message.content}`,
};
const idle: MessageState = { seq: 4, pendingSince: null, queue: [] };

function row(edit: (r: EndpointRecord) => void = () => {}, state: MessageState = idle): CommittedRow {
  const record = initialRecord();
  edit(record);
  return { recordJson: JSON.stringify(record), state };
}

/** A self-user endpoint bridging chat_a (with a webhook) and chat_c. */
const bridged = row((r) => {
  r.config['self-user'] = true;
  r.config.channels.chat_a = ['912345678901234500'];
  r.config.webhooks.chat_a = [HOOK_A];
  r.config.channels.chat_c = ['channel-c-1234'];
});

const message: UpdateParams = { sender: 'chat_c', sender_channel: 'channel-c-1234', message_content: 'hello', trigger: true };

describe('decideUpdate', () => {
  it('when a parameter breaks a rule, then nothing is written and the issue is named', () => {
    const decision = decideUpdate(row(), { message_embed: '[1]' }, context);
    expect(decision.write).toBeUndefined();
    expect(decision.result).toMatchObject({ kind: 'invalid', issues: [{ parameter: 'message_embed' }] });
  });

  it('when only_check is set, then nothing is written and the stored record is answered', () => {
    const current = row();
    const decision = decideUpdate(current, { blacklist: 'spam', only_check: true }, context);
    expect(decision.write).toBeUndefined();
    expect(decision.result).toMatchObject({ kind: 'ok', json: current.recordJson, queued: 0, state: idle });
  });

  it('when an update changes nothing and starts no message, then nothing is written', () => {
    const current = row((r) => (r.config.blacklist = ['spam']));
    expect(decideUpdate(current, { blacklist: 'SPAM' }, context).write).toBeUndefined();
    expect(decideUpdate(current, { trigger: false }, context).write).toBeUndefined();
  });

  it('when a config value changes, then the row is written with its message state kept', () => {
    const decision = decideUpdate(row(), { beta: true }, context);
    expect(decision.write?.state).toEqual(idle);
    expect(decision.write?.record.config.isbeta).toBe(true);
    expect(decision.write?.recordJson).toBe(JSON.stringify(decision.write?.record));
    expect(decision.write?.deliveries).toEqual([]);
  });

  it('when a message is triggered on a self-user endpoint, then it becomes pending and a delivery is queued per webhook', () => {
    const decision = decideUpdate(bridged, message, context);
    const state = { seq: 5, pendingSince: NOW, queue: [{ n: 5, u: 1, at: NOW, b: expect.any(Number), s: expect.any(String) }] };
    expect(decision.write?.state).toEqual(state);
    expect(decision.write?.record.meta.trigger).toBe(true);
    expect(decision.write?.deliveries).toEqual([{ platform: 'chat_a', url: HOOK_A, payload: 'body of hello', expiresAt: NOW + 30_000 }]);
    expect(decision.write?.messages).toEqual({
      append: {
        number: 5,
        sender: 'chat_c',
        senderChannel: 'channel-c-1234',
        message: expect.stringContaining('"hello"'),
        unread: 1,
        createdAt: NOW,
      },
    });
    expect(decision.result).toMatchObject({ kind: 'ok', queued: 1, state });
  });

  it('when a message is triggered while older ones are unread, then it is queued after them and only it is delivered', () => {
    const first = decideUpdate(bridged, message, context).write!;
    const later = { ...context, now: NOW + 10 };
    const decision = decideUpdate({ recordJson: first.recordJson!, state: first.state }, { ...message, message_content: 'again' }, later);
    expect(decision.write?.state).toMatchObject({ seq: 6, pendingSince: NOW, queue: [{ n: 5 }, { n: 6, at: NOW + 10 }] });
    expect(decision.write?.deliveries).toEqual([
      { platform: 'chat_a', url: HOOK_A, payload: 'body of again', expiresAt: NOW + 10 + 30_000 },
    ]);
  });

  it('when the unread messages are at their bound, then the next message is refused and nothing is written', () => {
    const queue = Array.from({ length: MESSAGE_QUEUE_LIMITS.messages }, (_, i) => ({ n: i + 1, u: 1, at: NOW, b: 10 }));
    const full = { ...bridged, state: { seq: queue.length, pendingSince: NOW, queue } };
    const decision = decideUpdate(full, message, context);
    expect(decision.write).toBeUndefined();
    expect(decision.result).toMatchObject({ kind: 'queue full', detail: expect.stringContaining(String(MESSAGE_QUEUE_LIMITS.messages)) });
    // A change that starts no message is not refused.
    expect(decideUpdate(full, { beta: true }, context).result.kind).toBe('ok');
  });

  it('when a message is triggered on an endpoint that does not deliver itself, then it is pending with nothing queued', () => {
    const notSelfUser = row((r) => {
      r.config.channels.chat_a = ['912345678901234500'];
      r.config.channels.chat_c = ['channel-c-1234'];
    });
    const decision = decideUpdate(notSelfUser, message, context);
    expect(decision.write?.state.pendingSince).toBe(NOW);
    expect(decision.write?.deliveries).toEqual([]);
  });

  it('when a message finishes at once on an idle endpoint (no other platform has channels), then nothing is written', () => {
    const alone = row((r) => (r.config.channels.chat_c = ['channel-c-1234']));
    const decision = decideUpdate(alone, { trigger: true, sender: 'chat_c' }, context);
    expect(decision.write).toBeUndefined();
    expect(decision.result).toMatchObject({ kind: 'ok', queued: 0, state: idle });
  });

  it('when trigger=false arrives while a message is pending, then the message is withdrawn (expired in the log) and nothing is queued', () => {
    const pending = decideUpdate(bridged, message, context).write!;
    const decision = decideUpdate({ recordJson: pending.recordJson!, state: pending.state }, { trigger: false }, context);
    expect(decision.write?.state).toEqual({ seq: 5, pendingSince: null, queue: [] });
    expect(decision.write?.messages).toEqual({ settle: [{ number: 5, unread: 0, expired: 1 }] });
    expect(decision.write?.deliveries).toEqual([]);
  });
});
