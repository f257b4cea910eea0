// The rights of a bot key, without HTTP: where it acts (its platform takes part) and which parameters
// it may send there (UPDATE_RIGHTS, REMOVAL_RIGHTS, as the spec and SECURITY.md print them).
import { describe, expect, it } from 'vitest';
import { REMOVAL_RIGHTS, UPDATE_RIGHTS, removalRefusals, takesPart, updateRefusals } from '../../src/domain/botRights.ts';
import type { EndpointRecord } from '../../src/domain/record.ts';
import { bridgedRecord } from './bridgedRecord.ts';

/** chat_a and chat_b bridged at position 0; chat_a alone at position 1. */
const bridged = bridgedRecord;

const pendingFrom = (sender: 'chat_a' | 'chat_b'): EndpointRecord => {
  const r = bridged();
  r.meta.trigger = true;
  r.meta.sender = sender;
  return r;
};

const named = (issues: { parameter: string }[]) => issues.map((i) => i.parameter);

describe('participation', () => {
  it('when a platform has a channel in the endpoint, then it takes part; with none, it does not', () => {
    expect(takesPart(bridged(), 'chat_a')).toBe(true);
    expect(takesPart(bridged(), 'chat_c')).toBe(false);
  });
});

describe('update rights of a chat_a key', () => {
  it('when it sends only its own platform parameters, with index and only_check, then nothing is refused', () => {
    expect(
      updateRefusals(bridged(), 'chat_a', {
        channel_chat_a: 'a2',
        webhook_chat_a: 'https://a.example/2',
        log_chat_a: 'log',
        index: 1,
        only_check: true,
      }),
    ).toEqual([]);
  });

  it("when it sends another platform's channel, log or webhook, then each is refused by name", () => {
    expect(
      named(
        updateRefusals(bridged(), 'chat_a', {
          channel_chat_b: 'b1',
          log_chat_c: 'l',
          webhook_chat_b: 'https://b.example/1',
          webhook_chat_d: 'x',
        }),
      ),
    ).toEqual(['channel_chat_b', 'log_chat_c', 'webhook_chat_b', 'webhook_chat_d']);
  });

  it('when it sends a community-wide setting, then it is refused (the endpoint token changes those)', () => {
    for (const params of [{ blacklist: 'w' }, { allowed_ids: '12345' }, { selfuse: false }, { beta: true }]) {
      expect(named(updateRefusals(bridged(), 'chat_a', params))).toEqual(Object.keys(params));
    }
  });

  it('when it writes a message as its own platform, then nothing is refused; without sender, the message fields are', () => {
    expect(updateRefusals(bridged(), 'chat_a', { sender: 'chat_a', message_content: 'hi', sender_channel: 'a0', trigger: true })).toEqual(
      [],
    );
    expect(named(updateRefusals(bridged(), 'chat_a', { message_content: 'hi', trigger: true }))).toEqual(['message_content', 'trigger']);
  });

  it("when another platform's message is the newest, then it may queue its own after it but neither edit, take over nor withdraw it", () => {
    const r = pendingFrom('chat_b');
    expect(updateRefusals(r, 'chat_a', { sender: 'chat_a', message_content: 'mine', trigger: true })).toEqual([]);
    expect(named(updateRefusals(r, 'chat_a', { sender: 'chat_a', message_content: 'edit' }))).toEqual(['sender', 'message_content']);
    expect(named(updateRefusals(r, 'chat_a', { trigger: false }, [{ s: 'chat_b' }]))).toEqual(['trigger']);
  });

  it('when every unread message is its own, or none is unread, then it may withdraw them; with one of another platform, it may not', () => {
    expect(updateRefusals(pendingFrom('chat_a'), 'chat_a', { trigger: false }, [{ s: 'chat_a' }, { s: 'chat_a' }])).toEqual([]);
    expect(updateRefusals(bridged(), 'chat_a', { trigger: false }, [])).toEqual([]);
    expect(
      updateRefusals(pendingFrom('chat_a'), 'chat_a', { trigger: false }, [{ s: 'chat_c' }, { s: 'chat_a' }]).map((i) => i.parameter),
    ).toEqual(['trigger']);
  });

  it('when the table is read, then every rule above has its line', () => {
    expect(UPDATE_RIGHTS).toMatchObject({
      index: 'any',
      only_check: 'any',
      channel_X: 'own platform',
      blacklist: 'endpoint token',
      'trigger=false': 'own message to end',
      message_content: 'own message',
    });
  });
});

describe('removal rights of a chat_a key', () => {
  it('when a position holds only its own channel and webhook, then it may remove that bridge and its log channel', () => {
    expect(removalRefusals(bridged(), 'chat_a', { bridge: 1, log_chat_a: true })).toEqual([]);
  });

  it("when a position holds another platform's channel or webhook, then removing it is refused naming bridge", () => {
    const issues = removalRefusals(bridged(), 'chat_a', { bridge: 0 });
    expect(named(issues)).toEqual(['bridge']);
    expect(issues[0]!.message).toContain('chat_b');
    const webhookOnly = bridged();
    webhookOnly.config.channels.chat_b = [];
    expect(named(removalRefusals(webhookOnly, 'chat_a', { bridge: 0 }))).toEqual(['bridge']);
  });

  it("when it removes community-wide values or another platform's log, then each is refused by name", () => {
    expect(named(removalRefusals(bridged(), 'chat_a', { blacklist: 'w', allowed_ids: '12345', log_chat_b: true }))).toEqual([
      'blacklist',
      'allowed_ids',
      'log_chat_b',
    ]);
    expect(REMOVAL_RIGHTS).toEqual({
      log_X: 'own platform',
      bridge: 'own platform',
      blacklist: 'endpoint token',
      allowed_ids: 'endpoint token',
    });
  });
});
