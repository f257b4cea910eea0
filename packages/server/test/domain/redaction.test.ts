// What a bot key sees of a record: other platforms' webhook URLs replaced, element for element.
import { describe, expect, it } from 'vitest';
import { REDACTED_WEBHOOK, hidesWebhooks, redactedFor, redactedJsonFor } from '../../src/domain/redaction.ts';
import { bridgedRecord } from './bridgedRecord.ts';

const record = bridgedRecord;

describe('redaction', () => {
  it("when a chat_a key reads, then chat_b's webhook URLs become the marker at the same positions, and its own stay", () => {
    const seen = redactedFor(record(), 'chat_a');
    expect(seen.config.webhooks).toEqual({
      chat_a: ['https://a.example/0', 'https://a.example/1'],
      chat_b: [REDACTED_WEBHOOK],
      chat_c: [],
      chat_d: [],
    });
    expect(seen.config.channels).toEqual(record().config.channels);
  });

  it('when a key of a platform without webhooks reads, then every webhook URL is hidden', () => {
    expect(redactedFor(record(), 'chat_d').config.webhooks).toMatchObject({
      chat_a: [REDACTED_WEBHOOK, REDACTED_WEBHOOK],
      chat_b: [REDACTED_WEBHOOK],
    });
  });

  it('when nothing is hidden, then the record and its JSON text are given back as they are; the stored record is never changed', () => {
    const r = record();
    r.config.webhooks.chat_b = [];
    const json = JSON.stringify(r);
    expect(hidesWebhooks(r, 'chat_a')).toBe(false);
    expect(redactedFor(r, 'chat_a')).toBe(r);
    expect(redactedJsonFor(r, json, 'chat_a')).toBe(json);
    const full = record();
    redactedFor(full, 'chat_c');
    expect(full).toEqual(record());
  });

  it('when the redacted record is serialised, then its members keep the stored order, and the marker fits a webhook parameter (50 to 350 characters)', () => {
    const r = record();
    const text = redactedJsonFor(r, JSON.stringify(r), 'chat_a');
    expect(text).toBe(JSON.stringify(r).replace('https://b.example/0', REDACTED_WEBHOOK));
    expect(REDACTED_WEBHOOK.length).toBeGreaterThanOrEqual(50);
  });
});
