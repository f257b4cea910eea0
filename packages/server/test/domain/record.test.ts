import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type EndpointRecord, PLATFORMS, copyRecord, initialRecord } from '../../src/domain/record.ts';
import { resetToIdle } from '../../src/domain/lifecycle.ts';

/** Every object and array reachable from `value`. */
function containers(value: unknown, found = new Set<object>()): Set<object> {
  if (typeof value === 'object' && value !== null) {
    found.add(value);
    for (const member of Object.values(value)) containers(member, found);
  }
  return found;
}

const text = fc.string({ maxLength: 12 });
const list = fc.array(text, { maxLength: 4 });
const perPlatform = <T>(arb: fc.Arbitrary<T>) => fc.record({ chat_a: arb, chat_b: arb, chat_c: arb, chat_d: arb });
const maybe = fc.option(text);
const platformOrNull = fc.constantFrom(null, ...PLATFORMS);

/** Records with every member filled in at random, built in the order the service builds them. */
const recordArb: fc.Arbitrary<EndpointRecord> = fc
  .record({
    allowed: list,
    blacklist: list,
    channels: perPlatform(list),
    webhooks: perPlatform(list),
    logs: perPlatform(fc.option(text)),
    flags: fc.tuple(fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean()),
    read: perPlatform(fc.boolean()),
    sender: platformOrNull,
    strings: fc.tuple(maybe, maybe, maybe, maybe, maybe, maybe),
    attachments: list,
    fields: fc.array(fc.record({ name: text, value: text, inline: fc.boolean() }), { maxLength: 3 }),
  })
  .map((g) => {
    const r = initialRecord();
    Object.assign(r.config, { 'allowed-ids': g.allowed, blacklist: g.blacklist, channels: g.channels, webhooks: g.webhooks, logs: g.logs });
    [r.config.isbeta, r.config['self-user'], r.meta.trigger, r.meta.message.isReply] = g.flags;
    Object.assign(r.meta, { read: g.read, sender: g.sender, 'sender-channel': g.strings[0] });
    const m = r.meta.message;
    [m.content, m.author.name, m.author.id, m.author.avatar, m.reply.author, m.reply.message] = g.strings;
    m.attachments = g.attachments;
    m.embed.fields = g.fields;
    m.embed.title = g.strings[1] ?? 'None';
    // A stored record is JSON text parsed back: the copy must work on what the stores hand out.
    return JSON.parse(JSON.stringify(r)) as EndpointRecord;
  });

describe('copyRecord', () => {
  it('copies every member, in the same order: the copy serialises to the same text', () => {
    fc.assert(
      fc.property(recordArb, (record) => {
        expect(JSON.stringify(copyRecord(record))).toBe(JSON.stringify(record));
      }),
    );
  });

  it('shares no object or array with the original, so editing the copy leaves the original as it was', () => {
    fc.assert(
      fc.property(recordArb, (record) => {
        const copy = copyRecord(record);
        const shared = [...containers(copy)].filter((c) => containers(record).has(c));
        expect(shared).toEqual([]);
      }),
    );
  });

  it('copies the records the lifecycle builds (a message returning to idle)', () => {
    const record = initialRecord();
    record.meta.message.content = 'hello';
    const idle = resetToIdle({ record, state: { seq: 1, pendingSince: null } }).record;
    expect(JSON.stringify(copyRecord(idle))).toBe(JSON.stringify(idle));
  });
});
