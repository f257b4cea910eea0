// The record operations' decisions for whoever acts, without HTTP: a bot key's refusals come first and
// leave nothing to write; the endpoint's token (no acting platform) goes straight to the rules.
import { describe, expect, it } from 'vitest';
import { decideMarkReadAs } from '../../src/domain/lifecycle.ts';
import type { MessageState } from '../../src/domain/row.ts';
import { decideRemovalAs } from '../../src/domain/removal.ts';
import { decideUpdateAs, type UpdateContext } from '../../src/domain/updateDecision.ts';
import { bridgedRecord } from './bridgedRecord.ts';

const context: UpdateContext = { allowPrivateWebhooks: false, now: 1_700_000_000_000, messageTtlMs: 30_000, webhookBody: () => undefined };
const idle: MessageState = { seq: 3, pendingSince: null, queue: [] };
const row = () => {
  const record = bridgedRecord();
  return { record, recordJson: JSON.stringify(record), state: idle };
};

describe('decideUpdateAs', () => {
  it("when a chat_a key sends another platform's parameter, then it is refused naming it and nothing is written", () => {
    const decision = decideUpdateAs('chat_a', row(), { channel_chat_b: 'b1', channel_chat_a: 'a2' }, context);
    expect(decision.write).toBeUndefined();
    expect(decision.result).toMatchObject({ kind: 'forbidden', issues: [{ parameter: 'channel_chat_b' }] });
  });

  it("when a chat_a key names another platform as sender, then it is refused without issues (the key's platform is the point)", () => {
    const decision = decideUpdateAs('chat_a', row(), { sender: 'chat_b', message_content: 'x', trigger: true }, context);
    expect(decision).toEqual({ result: { kind: 'forbidden', detail: expect.stringContaining('acts for chat_a') } });
  });

  it('when the token acts (no platform), then the same parameters are decided by the update rules', () => {
    const decision = decideUpdateAs(undefined, row(), { channel_chat_b: 'b1' }, context);
    expect(decision.result.kind).toBe('ok');
    expect(decision.write?.record.config.channels.chat_b).toEqual(['b0', 'b1']);
  });
});

describe('decideRemovalAs', () => {
  it("when a chat_b key removes a bridge that holds chat_a's channel, then it is refused and nothing is written", () => {
    const decision = decideRemovalAs('chat_b', row(), { bridge: 0 });
    expect(decision.write).toBeUndefined();
    expect(decision.result).toMatchObject({ kind: 'forbidden', issues: [{ parameter: 'bridge' }] });
  });

  it('when the token removes it, then the removal is decided', () => {
    const decision = decideRemovalAs(undefined, row(), { bridge: 0 });
    expect(decision.write?.record.config.channels).toMatchObject({ chat_a: ['a1'], chat_b: [] });
  });
});

describe('decideMarkReadAs', () => {
  it('when a bot key names no platform, then it marks its own; naming another is refused', () => {
    expect(decideMarkReadAs('chat_a', undefined, row(), undefined).result).toMatchObject({ kind: 'ok', platform: 'chat_a' });
    expect(decideMarkReadAs('chat_a', 'chat_b', row(), undefined).result).toMatchObject({ kind: 'forbidden' });
  });

  it('when nothing names a platform (the admin token), then the answer says so', () => {
    expect(decideMarkReadAs(undefined, undefined, row(), undefined)).toEqual({ result: { kind: 'no platform' } });
  });
});
