// The endpoint line of the export format, version 4: the message log's IDs, native replies, edits and
// deletes and the outbox's kinds are written and read back exactly; every new field is checked with a
// message naming it; and older versions' lines read with the defaults. The CLI round trips through
// both stores are in exportImport.test.ts.
import { describe, expect, it } from 'vitest';
import { initialRecord } from '../../src/domain/record.ts';
import { EXPORT_VERSION, endpointLine, headerLine, parseBodyLine, parseHeader } from '../../src/portability/exportFormat.ts';
import type { SpecSchemas } from '../../src/portability/specSchemas.ts';
import type { EndpointSnapshot } from '../../src/store/port.ts';
import { CONVERSATION_HOOK, CONVERSATION_LOG, CONVERSATION_OUTBOX } from '../store/conversation.ts';

/** Records are checked against the spec elsewhere: here every record is one. */
const schemas: SpecSchemas = { recordProblem: () => undefined, parameterProblem: () => undefined };

const conversation: EndpointSnapshot = {
  id: 'conversation-1',
  tokenHash: Buffer.alloc(32, 7),
  recordJson: JSON.stringify(initialRecord()),
  state: { seq: 2, pendingSince: null, queue: [] },
  version: 5,
  lastChange: 'delete',
  deliveries: CONVERSATION_OUTBOX,
  messages: CONVERSATION_LOG,
};

/** A line as JSON reads it, to break in every way a file may. */
type Line = any;

/** A change of the line that sets the member at `path` (dot-separated; `undefined` leaves it out). */
function setting(path: string, value: unknown): (line: Line) => void {
  return (line) => {
    const keys = path.split('.');
    let at = line;
    for (const key of keys.slice(0, -1)) at = at[key];
    at[keys.at(-1)!] = value;
  };
}

/** The conversation's line, changed by `change`, as a file of `version` would hold it, parsed. */
function parsedWith(change: (line: Line) => void, version = EXPORT_VERSION) {
  const line = JSON.parse(endpointLine(conversation)) as Line;
  change(line);
  return parseBodyLine(JSON.stringify(line), schemas, version);
}

const refused = (problem: string) => ({ kind: 'invalid', id: 'conversation-1', problem });

describe('export format version 4: endpoint lines', () => {
  it('when an endpoint with message IDs, a reply, an edit, a delete and queued edit and delete calls is written, then it reads back exactly', () => {
    expect(parseHeader(headerLine('sqlite', new Date(0)))).toEqual({ ok: true, version: 4 });
    const line = endpointLine(conversation);
    const written = JSON.parse(line) as Line;
    expect(written.lastChange).toBe('delete');
    expect(written.messages[0]).toMatchObject({ ids: { chat_a: 'a-1', chat_c: 'c-1', chat_d: 'd-1' }, edits: 1, editedAt: 70_000 });
    expect(written.messages[1]).toMatchObject({ ids: { chat_c: 'c-2' }, replyTo: 1, deletedAt: 71_000 });
    expect(written.deliveries.map((d: Line) => d.kind)).toEqual(['edit', 'delete']);
    expect(parseBodyLine(line, schemas)).toEqual({ kind: 'endpoint', snapshot: conversation });
  });

  it('when a message ID breaks its pattern or names no platform, then the line is refused naming the message and member', () => {
    const cases: [(line: Line) => void, RegExp][] = [
      [setting('messages.0.ids.chat_a', 'a 1'), /^messages\[0\]: ids\.chat_a must be a message ID: 1 to 100 printable ASCII/],
      [setting('messages.0.ids.chat_a', 'x'.repeat(101)), /^messages\[0\]: ids\.chat_a must be a message ID/],
      [setting('messages.0.ids.chat_a', ''), /^messages\[0\]: ids\.chat_a must be a message ID/],
      [setting('messages.0.ids.chat_a', 17), /^messages\[0\]: ids\.chat_a must be a message ID/],
      [setting('messages.1.ids.chat_x', 'x-2'), /^messages\[1\]: ids\.chat_x: not a platform/],
      [setting('messages.1.ids', ['c-2']), /^messages\[1\]: ids must be an object/],
      [setting('messages.1.ids', undefined), /^messages\[1\]: ids must be an object/],
    ];
    for (const [change, problem] of cases) {
      const parsed = parsedWith(change);
      expect(parsed).toMatchObject({ kind: 'invalid', id: 'conversation-1' });
      expect((parsed as { problem: string }).problem).toMatch(problem);
    }
  });

  it('when two messages of an endpoint have the same ID on a platform, then the line is refused naming both', () => {
    expect(parsedWith(setting('messages.1.ids.chat_a', 'a-1'))).toEqual(
      refused("messages: chat_a message ID 'a-1' belongs to messages 1 and 2: an ID names one message per endpoint and platform"),
    );
    // The same ID on two platforms names two copies: allowed.
    expect(parsedWith(setting('messages.1.ids.chat_d', 'a-1'))).toMatchObject({ kind: 'endpoint' });
  });

  it('when replyTo, edits, editedAt or deletedAt is out of bounds or inconsistent, then the line is refused saying which', () => {
    const replyTo = 'messages[1]: replyTo must be null or the number of an earlier message (1 to number - 1)';
    const times = 'editedAt and deletedAt must be null or non-negative integers';
    const cases: [(line: Line) => void, object][] = [
      [setting('messages.1.replyTo', 2), refused(replyTo)],
      [setting('messages.1.replyTo', 0), refused(replyTo)],
      [setting('messages.1.replyTo', '1'), refused(replyTo)],
      [setting('messages.1.replyTo', undefined), refused(replyTo)],
      [setting('messages.0.edits', 101), refused('messages[0]: edits must be an integer from 0 to 100')],
      [setting('messages.0.edits', -1), refused('messages[0]: edits must be an integer from 0 to 100')],
      [setting('messages.0.editedAt', null), refused('messages[0]: editedAt must be set exactly when edits is above 0')],
      [setting('messages.1.editedAt', 72_000), refused('messages[1]: editedAt must be set exactly when edits is above 0')],
      [setting('messages.1.deletedAt', 'yes'), refused(`messages[1]: ${times}`)],
      [setting('messages.0.editedAt', -5), refused(`messages[0]: ${times}`)],
    ];
    for (const [change, outcome] of cases) expect(parsedWith(change)).toEqual(outcome);
    // Edits at the limit, and a reply to a message past retention (not in the log any more): both are read.
    expect(parsedWith(setting('messages.0.edits', 100))).toMatchObject({ kind: 'endpoint' });
    expect(parsedWith((l) => void l.messages.shift())).toMatchObject({ kind: 'endpoint' });
  });

  it("when an outbox entry's kind, message or payload does not fit, or a message has two creates for a platform, then the line is refused saying which", () => {
    const create = {
      messageSeq: 2,
      kind: 'create',
      platform: 'chat_a',
      url: CONVERSATION_HOOK,
      payload: '{}',
      attempts: 0,
      nextAttemptAt: 0,
      expiresAt: 1,
    };
    const cases: [(line: Line) => void, object][] = [
      [setting('deliveries.0.kind', 'update'), refused('deliveries[0]: kind must be one of "create", "edit", "delete"')],
      [setting('deliveries.1.kind', undefined), refused('deliveries[1]: kind must be one of "create", "edit", "delete"')],
      [setting('deliveries.0.messageSeq', undefined), refused('deliveries[0]: messageSeq must be a positive integer')],
      [setting('deliveries.1.payload', '{}'), refused('deliveries[1]: payload must be empty ("") for a delete')],
      [setting('deliveries.0.payload', 'not json'), refused('deliveries[0]: payload must be JSON text')],
      [(l) => void l.deliveries.push(create, create), refused('deliveries: at most one create per platform of a message')],
      [setting('lastChange', undefined), refused('lastChange must be one of "record", "edit", "delete"')],
      [setting('lastChange', 'rename'), refused('lastChange must be one of "record", "edit", "delete"')],
    ];
    for (const [change, outcome] of cases) expect(parsedWith(change)).toEqual(outcome);
    // Edits and deletes of one copy, any number, also while nothing is unread.
    const twice = parsedWith((l) => l.deliveries.push({ ...l.deliveries[0], payload: '{"content":"again"}' }, l.deliveries[1]));
    expect(twice).toMatchObject({ kind: 'endpoint' });
    expect((twice as { snapshot: EndpointSnapshot }).snapshot.deliveries.map((d) => d.kind)).toEqual(['edit', 'delete', 'edit', 'delete']);
  });

  it('when a version 3 line (no IDs, edits, deletes, kinds or last change) is read, then its messages and deliveries take the defaults', () => {
    const v3 = (line: Line) => {
      line.lastChange = undefined;
      for (const m of line.messages) for (const field of ['ids', 'replyTo', 'edits', 'editedAt', 'deletedAt']) m[field] = undefined;
      // A version 3 outbox holds creates of unread messages only.
      line.record.meta.trigger = true;
      line.pendingSince = 61_000;
      line.messages[1].unread = 1;
      line.queue = [{ n: 2, u: 1, at: 61_000, b: 2 }];
      line.deliveries = [{ ...line.deliveries[0], messageSeq: 2, kind: 'delete', payload: '{"content":"hi"}' }];
    };
    const parsed = parsedWith(v3, 3) as { kind: string; snapshot: EndpointSnapshot };
    expect(parsed.kind).toBe('endpoint');
    const defaults = { ids: {}, replyTo: null, edits: 0, editedAt: null, deletedAt: null };
    expect(parsed.snapshot.messages).toEqual([
      { ...CONVERSATION_LOG[0], ...defaults },
      { ...CONVERSATION_LOG[1], ...defaults, unread: 1 },
    ]);
    // A `kind` in an older file is none of its fields: every entry is a create.
    expect(parsed.snapshot.deliveries.map((d) => [d.kind, d.messageSeq, d.payload])).toEqual([['create', 2, '{"content":"hi"}']]);
    expect(parsed.snapshot.lastChange).toBe('record');
    // Before version 4 an idle endpoint had no deliveries at all.
    expect(parsedWith(setting('lastChange', undefined), 3)).toEqual(refused('an idle endpoint has no deliveries'));
  });
});
