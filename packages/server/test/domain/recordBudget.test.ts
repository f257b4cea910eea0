// The record's size budget: large enough for every list at its maximum in any text a parameter may
// hold, and refused beyond it, with nothing applied.
import { describe, expect, it } from 'vitest';
import { initialRecord, LIST_LIMITS } from '../../src/domain/record.ts';
import { RECORD_BUDGET_BYTES, recordBudgetProblem } from '../../src/domain/recordBudget.ts';
import { applyUpdate, type UpdateParams } from '../../src/domain/update.ts';

const policy = { allowPrivateWebhooks: false };
/** A character that takes four bytes in UTF-8 and is written as itself in JSON: the most any allowed character takes. */
const WIDE = '😀';

/** `n` code points: a distinct prefix, then wide characters. */
const wide = (prefix: string | number, n: number) => String(prefix) + WIDE.repeat(n - String(prefix).length);
const hook = (platform: string, i: number) => {
  const base = `https://${platform}.example.com/hooks/${i}/`;
  return base + 'a'.repeat(350 - base.length); // URLs are ASCII (format: uri)
};

/** `n` elements of `length` code points each, distinct. */
const elements = (n: number, length: number) => Array.from({ length: n }, (_, i) => wide(i, length));

describe('record size budget', () => {
  it('when every list and member is at its maximum, in characters of four bytes each, then the record stays within the budget', () => {
    // The lists as full as the update rules let them be (LIST_LIMITS), each element as long as its
    // parameter allows (the spec's maxLength); applying them one request at a time would take seconds.
    const record = initialRecord();
    record.config.blacklist = elements(LIST_LIMITS.blacklist, 250);
    record.config['allowed-ids'] = elements(LIST_LIMITS.allowedIds, 50);
    record.config.channels = {
      chat_a: elements(LIST_LIMITS.perPlatform, 100),
      chat_b: elements(LIST_LIMITS.perPlatform, 150),
      chat_c: elements(LIST_LIMITS.perPlatform, 50),
      chat_d: elements(LIST_LIMITS.perPlatform, 50),
    };
    record.config.webhooks.chat_a = Array.from({ length: LIST_LIMITS.perPlatform }, (_, i) => hook('chat-a', i));
    record.config.webhooks.chat_b = Array.from({ length: LIST_LIMITS.perPlatform }, (_, i) => hook('chat-b', i));
    // The other members through the rules, each at its longest.
    const members: UpdateParams = {
      log_chat_a: wide('', 100),
      log_chat_b: wide('', 50),
      log_chat_c: wide('', 50),
      log_chat_d: wide('', 50),
      message_content: wide('', 1500),
      message_reply_message: wide('', 1500),
      message_reply_author: wide('', 50),
      message_author_name: wide('', 50),
      message_author_id: wide('', 50),
      message_author_avatar: `https://a.example/${WIDE.repeat(250 - 18)}`,
      message_attachments: `https://a.example/${WIDE.repeat(1550 - 18)}`,
      sender_channel: wide('', 150),
      message_reply: true,
    };
    const embedFields = Array.from({ length: 64 }, () => '{"name":"","value":""}').join(',');
    // The longest embed text, and the embed whose stored form grows the most over its text.
    for (const message_embed of [JSON.stringify({ title: WIDE.repeat(1485) }), `{"fields":[${embedFields}]}`]) {
      const outcome = applyUpdate(JSON.stringify(record), { ...members, message_embed }, policy);
      expect(outcome.ok).toBe(true);
      if (!outcome.ok) continue;
      const bytes = Buffer.byteLength(outcome.json);
      expect(bytes).toBeGreaterThan(1_200_000); // really full
      expect(bytes).toBeLessThan(RECORD_BUDGET_BYTES);
    }
  });

  it('when an update would take the record past the budget, then it is refused naming the budget and the longest parameter', () => {
    const record = initialRecord();
    // Stored before the budget existed: 100 bytes under it, in a way no request could write.
    const base = JSON.stringify(record).length + 2;
    record.config.blacklist = ['x'.repeat(RECORD_BUDGET_BYTES - 100 - base)];
    const json = JSON.stringify(record);
    expect(Buffer.byteLength(json)).toBe(RECORD_BUDGET_BYTES - 100);
    const outcome = applyUpdate(json, { blacklist: 'y'.repeat(250), message_author_name: 'Ada' }, policy);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.issues).toHaveLength(1);
      expect(outcome.issues[0]).toMatchObject({ parameter: 'blacklist', in: 'query' });
      expect(outcome.issues[0]!.message).toContain(String(RECORD_BUDGET_BYTES));
    }
    // A smaller change still fits.
    expect(applyUpdate(json, { message_author_name: 'Ada' }, policy).ok).toBe(true);
  });

  it('when a record is already past the budget, then changes that do not make it larger are still applied', () => {
    const over = initialRecord();
    over.config.blacklist = ['x'.repeat(RECORD_BUDGET_BYTES)];
    over.meta.message.content = 'a longer message text';
    const json = JSON.stringify(over);
    expect(applyUpdate(json, { message_content: 'short' }, policy).ok).toBe(true);
    expect(applyUpdate(json, { message_content: 'a longer message text, and more' }, policy).ok).toBe(false);
    expect(recordBudgetProblem(json, json)).toBeUndefined();
  });

  it('when a record is counted, then it is in UTF-8 bytes, not characters', () => {
    const cjk = '語'.repeat(Math.floor(RECORD_BUDGET_BYTES / 3) + 10); // under the budget in characters, over it in bytes
    expect(recordBudgetProblem(`"${cjk}"`, '""')).toMatch(/budget/);
    expect(recordBudgetProblem(`"${'a'.repeat(RECORD_BUDGET_BYTES - 2)}"`, '""')).toBeUndefined();
  });
});
