import { describe, expect, it } from 'vitest';
import { type EndpointRecord, initialRecord } from '../../src/domain/record.ts';
import type { MessageState } from '../../src/domain/row.ts';
import { applyRemoval, type CommittedRow, decideRemoval } from '../../src/domain/removal.ts';

const HOOK = (n: number) => `https://chat-a.example.com/api/webhooks/${n}/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa`;
const idle: MessageState = { seq: 4, pendingSince: null, queue: [] };

function row(edit: (r: EndpointRecord) => void = () => {}, state: MessageState = idle): CommittedRow {
  const record = initialRecord();
  edit(record);
  return { recordJson: JSON.stringify(record), state };
}

/** Three bridges on chat_a and chat_b; chat_c has two channels, chat_a's webhook list one more than its channels. */
const bridged = row((r) => {
  r.config.channels.chat_a = ['a0', 'a1', 'a2'];
  r.config.webhooks.chat_a = [HOOK(0), HOOK(1), HOOK(2), HOOK(3)];
  r.config.channels.chat_b = ['b0', 'b1', 'b2'];
  r.config.webhooks.chat_b = [HOOK(10), HOOK(11)];
  r.config.channels.chat_c = ['c0', 'c1'];
  r.config.blacklist = ['Spam', 'scam', 'phish'];
  r.config['allowed-ids'] = ['id-00001', 'ID-00002'];
  r.config.logs = { chat_a: 'log-a', chat_b: 'log-b', chat_c: null, chat_d: 'log-d' };
});

const applied = (current: CommittedRow, params: Parameters<typeof applyRemoval>[1]) => {
  const outcome = applyRemoval(current.recordJson, params);
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.issues));
  return outcome;
};

describe('applyRemoval', () => {
  it('when a bridge is removed, then that position leaves every list that has it and the later ones move down together', () => {
    const { record, removedWebhooks } = applied(bridged, { bridge: 1 });
    expect(record.config.channels).toEqual({ chat_a: ['a0', 'a2'], chat_b: ['b0', 'b2'], chat_c: ['c0'], chat_d: [] });
    expect(record.config.webhooks).toEqual({ chat_a: [HOOK(0), HOOK(2), HOOK(3)], chat_b: [HOOK(10)], chat_c: [], chat_d: [] });
    expect(removedWebhooks).toEqual([
      { platform: 'chat_a', url: HOOK(1) },
      { platform: 'chat_b', url: HOOK(11) },
    ]);
  });

  it('when the bridge is past the end of shorter lists, then only the lists that have it lose it', () => {
    const { record } = applied(bridged, { bridge: 3 });
    expect(record.config.webhooks.chat_a).toEqual([HOOK(0), HOOK(1), HOOK(2)]);
    expect(record.config.channels).toEqual(JSON.parse(bridged.recordJson).config.channels);
  });

  it('when no channels or webhooks list has the position, then the bridge is refused and nothing is applied', () => {
    const outcome = applyRemoval(bridged.recordJson, { bridge: 4, blacklist: 'spam' });
    expect(outcome).toMatchObject({ ok: false, issues: [{ parameter: 'bridge', in: 'query' }] });
    expect(applyRemoval(row().recordJson, { bridge: 0 })).toMatchObject({ ok: false, issues: [{ parameter: 'bridge' }] });
  });

  it('when blacklist words are removed, then they match without regard to letter case; allowed IDs match exactly', () => {
    const { record } = applied(bridged, { blacklist: ' SPAM , Phish', allowed_ids: 'id-00002,ID-00002' });
    expect(record.config.blacklist).toEqual(['scam']);
    expect(record.config['allowed-ids']).toEqual(['id-00001']);
  });

  it('when log_chat_x=true is sent, then that log channel is cleared; false leaves it', () => {
    const { record } = applied(bridged, { log_chat_a: true, log_chat_b: false, log_chat_c: true });
    expect(record.config.logs).toEqual({ chat_a: null, chat_b: 'log-b', chat_c: null, chat_d: 'log-d' });
  });

  it('when what is removed is absent, then the outcome is unchanged', () => {
    const outcome = applied(bridged, { blacklist: 'nothing', allowed_ids: 'id-99999', log_chat_c: true });
    expect(outcome.changed).toBe(false);
    expect(outcome.json).toBe(bridged.recordJson);
  });

  it('when a comma list holds no item, then it is refused naming the parameter', () => {
    expect(applyRemoval(bridged.recordJson, { blacklist: ' , ,' })).toMatchObject({ ok: false, issues: [{ parameter: 'blacklist' }] });
  });

  it('when a webhook URL stands twice in its list, then removing one of them does not count it as removed', () => {
    const twice = row((r) => {
      r.config.webhooks.chat_b = [HOOK(1), HOOK(1)];
    });
    expect(applied(twice, { bridge: 0 }).removedWebhooks).toEqual([]);
  });
});

describe('decideRemoval', () => {
  it('when something changes, then the record is written with the state as it was, and the removed webhooks’ deliveries are dropped', () => {
    const pending: MessageState = { seq: 5, pendingSince: 1000, queue: [{ n: 5, u: 3, at: 1000, b: 2 }] };
    const current = { ...bridged, state: pending };
    const decision = decideRemoval(current, { bridge: 0 });
    expect(decision.write).toMatchObject({
      state: pending,
      dropDeliveriesTo: [
        { platform: 'chat_a', url: HOOK(0) },
        { platform: 'chat_b', url: HOOK(10) },
      ],
    });
    expect(decision.result).toMatchObject({ kind: 'ok', state: pending });
    expect(decision.write!.recordJson).toBe(JSON.stringify(decision.write!.record));
  });

  it('when nothing changes, then nothing is written (no event, no version)', () => {
    const decision = decideRemoval(bridged, { allowed_ids: 'id-99999' });
    expect(decision.write).toBeUndefined();
    expect(decision.result).toMatchObject({ kind: 'ok', json: bridged.recordJson });
  });

  it('when the request is invalid, then nothing is written and the issue is named', () => {
    const decision = decideRemoval(bridged, { bridge: 9 });
    expect(decision.write).toBeUndefined();
    expect(decision.result).toMatchObject({ kind: 'invalid', issues: [{ parameter: 'bridge' }] });
  });
});
