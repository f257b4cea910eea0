// The export file: JSON lines (docs/export-format.md describes every line kind and field). A header
// line, then the lines of each kind in LINE_KINDS order (endpoints, then bots), and an end line with
// the count of each kind, so a file cut short is told from a whole one. Tokens and bot keys appear only
// as the SHA-256 digests the stores keep.
//
// A new kind of line, or a new field of a line, is a new version: a kind gets its place in LINE_KINDS
// and a count in the end line; and a release refuses a file of a version it does not know, whole,
// rather than restoring part of a store (an older release would read a newer file's lines without
// the fields it does not know, and lose them silently).
import { ENDPOINT_ID } from '../admin/endpoints.ts';
import { BOT_ID } from '../admin/bots.ts';
import { reservedIdProblem } from '../domain/reservedIds.ts';
import { EDIT_LIMIT } from '../domain/messageEdits.ts';
import { isMessageId, type MessageIds } from '../domain/messageIds.ts';
import { PLATFORMS, type Platform } from '../domain/record.ts';
import type { ChangeKind, CopyCall } from '../domain/row.ts';
import type { EndpointSnapshot, SnapshotDelivery, StoredBot } from '../store/port.ts';
import type { LoggedMessage } from '../store/messageLog.ts';
import { maskOf, type QueuedMessage } from '../domain/messageQueue.ts';
import type { SpecSchemas } from './specSchemas.ts';

export const EXPORT_FORMAT = 'chatbridge-export';
/** The version written. */
export const EXPORT_VERSION = 4;
/**
 * The kinds of line of each version this release reads, in the order they come. Version 1 had
 * endpoints only; version 3's endpoint lines carry the endpoint's message log and queue; version 4's
 * carry each message's copies' IDs, native reply, edits and delete, the kind of each outbox entry
 * (edits and deletes of copies are queued too) and the kind of the endpoint's last change.
 */
export const LINE_KINDS: Record<number, readonly LineKind[]> = {
  1: ['endpoint'],
  2: ['endpoint', 'bot'],
  3: ['endpoint', 'bot'],
  4: ['endpoint', 'bot'],
};
export type LineKind = 'endpoint' | 'bot';
/** The end line's count of each kind. */
export const COUNT_FIELD: Record<LineKind, string> = { endpoint: 'endpoints', bot: 'bots' };
/** The longest line an import reads (a record at every list's limit is well under 1 MiB). */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

export function headerLine(store: string, exportedAt: Date): string {
  return JSON.stringify({ format: EXPORT_FORMAT, version: EXPORT_VERSION, exportedAt: exportedAt.toISOString(), source: store });
}

/** The record goes in as the stored text itself, so it reads back byte for byte. */
export function endpointLine(s: EndpointSnapshot): string {
  const head = JSON.stringify({
    type: 'endpoint',
    id: s.id,
    tokenSha256: Buffer.from(s.tokenHash).toString('hex'),
    messageSeq: s.state.seq,
    pendingSince: s.state.pendingSince,
    version: s.version,
    lastChange: s.lastChange,
    deliveries: s.deliveries,
    queue: s.state.queue,
    messages: s.messages.map((m) => ({ ...m, message: JSON.parse(m.message) as unknown })),
  });
  return `${head.slice(0, -1)},"record":${s.recordJson}}`;
}

/** A bot: its ID, the platform its key acts for, and the key's digest (never the key). */
export function botLine(bot: StoredBot): string {
  return JSON.stringify({ type: 'bot', id: bot.id, platform: bot.platform, keySha256: Buffer.from(bot.keyHash).toString('hex') });
}

export const endLine = (counts: Record<LineKind, number>) => JSON.stringify({ type: 'end', endpoints: counts.endpoint, bots: counts.bot });

export type ParsedLine =
  | { kind: 'header' }
  | { kind: 'endpoint'; snapshot: EndpointSnapshot }
  | { kind: 'bot'; bot: StoredBot }
  | { kind: 'end'; counts: Partial<Record<LineKind, number>> }
  | { kind: 'invalid'; problem: string; id?: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isTimeOrNull = (v: unknown) => v === null || isCount(v);

const COPY_CALLS: readonly CopyCall[] = ['create', 'edit', 'delete'];
const CHANGE_KINDS: readonly ChangeKind[] = ['record', 'edit', 'delete'];
const oneOf = (values: readonly string[]) => values.map((v) => `"${v}"`).join(', ');

const isJsonText = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/**
 * `version`: the file's. Before 4 an entry has no `kind` (it is a create) and, before 3, no
 * `messageSeq` (it delivers the endpoint's newest message); from 4 on both are required, as an edit
 * or delete may be about any logged message.
 */
function deliveryProblem(d: unknown, version: number): string | undefined {
  if (!isObject(d)) return 'must be an object';
  if (version >= 4 && !COPY_CALLS.includes(d.kind as CopyCall)) return `kind must be one of ${oneOf(COPY_CALLS)}`;
  if (version >= 4 && !(isCount(d.messageSeq) && d.messageSeq >= 1)) return 'messageSeq must be a positive integer';
  if (d.messageSeq !== undefined && !isCount(d.messageSeq)) return 'messageSeq must be a non-negative integer';
  if (!PLATFORMS.includes(d.platform as Platform)) return `platform must be one of ${PLATFORMS.join(', ')}`;
  if (typeof d.url !== 'string' || typeof d.payload !== 'string') return 'url and payload must be strings';
  if (!isCount(d.attempts) || !isCount(d.nextAttemptAt) || !isCount(d.expiresAt))
    return 'attempts, nextAttemptAt and expiresAt must be non-negative integers';
  // The relay sends a create's or an edit's payload as its JSON body; a delete has none.
  if (version >= 4 && d.kind === 'delete') return d.payload === '' ? undefined : 'payload must be empty ("") for a delete';
  if (!isJsonText(d.payload)) return 'payload must be JSON text';
  return undefined;
}

const isMask = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 15;

function idsProblem(ids: unknown): string | undefined {
  if (!isObject(ids)) return `ids must be an object whose members are platforms (${PLATFORMS.join(', ')})`;
  for (const [platform, id] of Object.entries(ids)) {
    if (!PLATFORMS.includes(platform as Platform)) return `ids.${platform}: not a platform (${PLATFORMS.join(', ')})`;
    if (!isMessageId(id)) return `ids.${platform} must be a message ID: 1 to 100 printable ASCII characters, no spaces (^[!-~]{1,100}$)`;
  }
  return undefined;
}

/** `version`: the file's; the IDs, reply, edits and delete are read from version 4 on. */
function messageProblem(m: unknown, version: number): string | undefined {
  if (!isObject(m)) return 'must be an object';
  if (!isCount(m.number) || m.number < 1) return 'number must be a positive integer';
  if (m.sender !== null && !PLATFORMS.includes(m.sender as Platform)) return `sender must be null or one of ${PLATFORMS.join(', ')}`;
  if (m.senderChannel !== null && typeof m.senderChannel !== 'string') return 'senderChannel must be null or a string';
  if (!isObject(m.message)) return 'message must be an object';
  if (!isMask(m.unread) || !isMask(m.expired)) return 'unread and expired must be platform masks (0 to 15)';
  if (!isCount(m.createdAt)) return 'createdAt must be a non-negative integer';
  if (version < 4) return undefined;
  const ids = idsProblem(m.ids);
  if (ids) return ids;
  // A native reply answers a message accepted before it.
  if (m.replyTo !== null && !(isCount(m.replyTo) && m.replyTo >= 1 && m.replyTo < m.number))
    return 'replyTo must be null or the number of an earlier message (1 to number - 1)';
  if (!isCount(m.edits) || m.edits > EDIT_LIMIT) return `edits must be an integer from 0 to ${EDIT_LIMIT}`;
  if (!isTimeOrNull(m.editedAt) || !isTimeOrNull(m.deletedAt)) return 'editedAt and deletedAt must be null or non-negative integers';
  if ((m.editedAt !== null) !== m.edits > 0) return 'editedAt must be set exactly when edits is above 0';
  return undefined;
}

/** An ID names one message per endpoint and platform (the store's key): the first ID two messages share. */
function sharedIdProblem(messages: readonly { number: number; ids: MessageIds }[]): string | undefined {
  const owners = new Map<string, number>();
  for (const m of messages) {
    for (const [platform, id] of Object.entries(m.ids)) {
      const key = `${platform}\u0000${id}`;
      const owner = owners.get(key);
      if (owner !== undefined)
        return `${platform} message ID '${id}' belongs to messages ${owner} and ${m.number}: an ID names one message per endpoint and platform`;
      owners.set(key, m.number);
    }
  }
  return undefined;
}

function queueProblem(q: unknown): string | undefined {
  if (!isObject(q)) return 'must be an object';
  if (!isCount(q.n) || q.n < 1 || !isMask(q.u) || q.u === 0 || !isCount(q.at) || !isCount(q.b))
    return 'n must be a positive integer, u a non-empty platform mask, at and b non-negative integers';
  if (q.s !== undefined && q.s !== null && !PLATFORMS.includes(q.s as Platform)) return `s must be null or one of ${PLATFORMS.join(', ')}`;
  return undefined;
}

/**
 * Files before version 3 hold at most one message, the pending one, in the record: it becomes the
 * endpoint's message log and queue, unread by the platforms whose read flag is false.
 */
function logOfPendingRecord(
  record: { meta: { message: unknown; read: Record<Platform, boolean>; sender: Platform | null; 'sender-channel': string | null } },
  seq: number,
  pendingSince: number | null,
): { messages: LoggedMessage[]; queue: QueuedMessage[] } {
  if (pendingSince === null) return { messages: [], queue: [] };
  const message = JSON.stringify(record.meta.message);
  const unread = maskOf(PLATFORMS.filter((p) => !record.meta.read[p]));
  return {
    messages: [
      {
        number: seq,
        sender: record.meta.sender,
        senderChannel: record.meta['sender-channel'],
        message,
        unread,
        expired: 0,
        createdAt: pendingSince,
        ids: {},
        replyTo: null,
        edits: 0,
        editedAt: null,
        deletedAt: null,
      },
    ],
    queue: unread === 0 ? [] : [{ n: seq, u: unread, at: pendingSince, b: Buffer.byteLength(message), s: record.meta.sender }],
  };
}

/** Reads the header (the first line): the format and a version this release reads. */
export function parseHeader(text: string): { ok: true; version: number } | { ok: false; problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'the first line is not JSON: not a chatbridge export' };
  }
  if (!isObject(value) || value.format !== EXPORT_FORMAT)
    return { ok: false, problem: `the first line does not name the format ${EXPORT_FORMAT}` };
  const kinds = typeof value.version === 'number' ? LINE_KINDS[value.version] : undefined;
  if (!kinds) {
    const known = Object.keys(LINE_KINDS).join(' and ');
    return { ok: false, problem: `export version ${String(value.version)}: this release reads versions ${known}` };
  }
  return { ok: true, version: value.version as number };
}

/** Reads a bot line: ID, platform and key digest. */
function parseBot(value: Record<string, unknown>): ParsedLine {
  const id = typeof value.id === 'string' && BOT_ID.test(value.id) ? value.id : undefined;
  const invalid = (problem: string): ParsedLine => ({ kind: 'invalid', problem, ...(id !== undefined && { id }) });
  if (id === undefined) return invalid('bot id must be 1 to 64 characters of A-Z a-z 0-9 _ -');
  if (!PLATFORMS.includes(value.platform as Platform)) return invalid(`bot platform must be one of ${PLATFORMS.join(', ')}`);
  if (typeof value.keySha256 !== 'string' || !/^[0-9a-f]{64}$/.test(value.keySha256))
    return invalid('keySha256 must be 64 lower-case hex digits');
  return { kind: 'bot', bot: { id, platform: value.platform as Platform, keyHash: Buffer.from(value.keySha256, 'hex') } };
}

/**
 * Reads a line after the header of a file of `version`: one of that version's kinds or the end line,
 * checking every field (an endpoint's record against the spec's schema).
 */
export function parseBodyLine(text: string, schemas: SpecSchemas, version = EXPORT_VERSION): ParsedLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'invalid', problem: 'not JSON' };
  }
  if (!isObject(value)) return { kind: 'invalid', problem: 'not a JSON object' };
  const kinds = LINE_KINDS[version] ?? [];
  if (value.type === 'end') {
    const counts: Partial<Record<LineKind, number>> = {};
    for (const kind of kinds) {
      const count = value[COUNT_FIELD[kind]];
      if (!isCount(count)) return { kind: 'invalid', problem: `end line: ${COUNT_FIELD[kind]} must be a count` };
      counts[kind] = count;
    }
    return { kind: 'end', counts };
  }
  if (!kinds.includes(value.type as LineKind))
    return { kind: 'invalid', problem: `type must be ${[...kinds, 'end'].map((k) => `"${k}"`).join(', ')} in a version ${version} file` };
  if (value.type === 'bot') return parseBot(value);
  const id = typeof value.id === 'string' && ENDPOINT_ID.test(value.id) ? value.id : undefined;
  const invalid = (problem: string): ParsedLine => ({ kind: 'invalid', problem, ...(id !== undefined && { id }) });
  if (id === undefined) return invalid('id must be 1 to 64 characters of A-Z a-z 0-9 _ -');
  const reserved = reservedIdProblem(id);
  if (reserved) return invalid(`id ${reserved}`);
  if (typeof value.tokenSha256 !== 'string' || !/^[0-9a-f]{64}$/.test(value.tokenSha256))
    return invalid('tokenSha256 must be 64 lower-case hex digits');
  if (!isCount(value.messageSeq) || !isCount(value.version)) return invalid('messageSeq and version must be non-negative integers');
  if (value.pendingSince !== null && !isCount(value.pendingSince)) return invalid('pendingSince must be null or a non-negative integer');
  const recordProblem = schemas.recordProblem(value.record);
  if (recordProblem) return invalid(recordProblem);
  const record = value.record as { meta: { trigger: boolean } };
  if (record.meta.trigger !== (value.pendingSince !== null))
    return invalid('pendingSince must be set exactly when record.meta.trigger is true');
  if (version >= 4 && !CHANGE_KINDS.includes(value.lastChange as ChangeKind))
    return invalid(`lastChange must be one of ${oneOf(CHANGE_KINDS)}`);
  if (!Array.isArray(value.deliveries)) return invalid('deliveries must be a list');
  // Before version 4 the outbox held creates of unread messages only. Since, edits and deletes of
  // copies made already stay queued while nothing is unread, and a create under way when its
  // platform read the message is left to finish (its answer names the copy they need); one imported
  // is sent only if the message is still unread then (the relay checks each before it sends).
  if (version < 4 && value.pendingSince === null && value.deliveries.length > 0) return invalid('an idle endpoint has no deliveries');
  for (const [i, d] of value.deliveries.entries()) {
    const problem = deliveryProblem(d, version);
    if (problem) return invalid(`deliveries[${i}]: ${problem}`);
  }
  const kindOf = (d: { kind?: CopyCall }): CopyCall => (version >= 4 ? d.kind! : 'create');
  // The store keeps one create per platform of a message; edits and deletes, any number.
  const creates = (value.deliveries as { kind?: CopyCall; platform: string; messageSeq?: number }[]).filter((d) => kindOf(d) === 'create');
  const platforms = creates.map((d) => `${d.messageSeq ?? value.messageSeq}:${d.platform}`);
  if (new Set(platforms).size !== platforms.length) return invalid('deliveries: at most one create per platform of a message');
  let log: { messages: LoggedMessage[]; queue: QueuedMessage[] };
  if (version >= 3) {
    if (!Array.isArray(value.messages) || !Array.isArray(value.queue)) return invalid('messages and queue must be lists');
    for (const [i, m] of value.messages.entries()) {
      const problem = messageProblem(m, version);
      if (problem) return invalid(`messages[${i}]: ${problem}`);
    }
    for (const [i, q] of value.queue.entries()) {
      const problem = queueProblem(q);
      if (problem) return invalid(`queue[${i}]: ${problem}`);
    }
    const queue = value.queue as QueuedMessage[];
    if ((queue[0]?.at ?? null) !== value.pendingSince)
      return invalid("pendingSince must be the queue's first message's time (null when it is empty)");
    const numbers = new Set((value.messages as { number: number }[]).map((m) => m.number));
    if (numbers.size !== value.messages.length) return invalid('messages: each number once');
    if (!queue.every((q) => numbers.has(q.n))) return invalid('queue: every queued message must be among messages');
    const messages = value.messages as (Omit<LoggedMessage, 'message'> & { message: unknown })[];
    const shared = version >= 4 ? sharedIdProblem(messages) : undefined;
    if (shared) return invalid(`messages: ${shared}`);
    log = {
      queue: queue.map((q) => ({ n: q.n, u: q.u, at: q.at, b: q.b, ...(q.s !== undefined && { s: q.s }) })),
      // Before version 4 a message has no known copy IDs, no native reply, and was neither edited nor deleted.
      messages: messages.map((m) => ({
        number: m.number,
        sender: m.sender,
        senderChannel: m.senderChannel,
        message: JSON.stringify(m.message),
        unread: m.unread,
        expired: m.expired,
        createdAt: m.createdAt,
        ids: version >= 4 ? { ...m.ids } : {},
        replyTo: version >= 4 ? m.replyTo : null,
        edits: version >= 4 ? m.edits : 0,
        editedAt: version >= 4 ? m.editedAt : null,
        deletedAt: version >= 4 ? m.deletedAt : null,
      })),
    };
  } else {
    log = logOfPendingRecord(
      value.record as Parameters<typeof logOfPendingRecord>[0],
      value.messageSeq,
      value.pendingSince as number | null,
    );
  }
  return {
    kind: 'endpoint',
    snapshot: {
      id,
      tokenHash: Buffer.from(value.tokenSha256, 'hex'),
      // JSON.stringify of the parsed record gives back the text the store committed (it wrote JSON.stringify's output).
      recordJson: JSON.stringify(value.record),
      state: { seq: value.messageSeq, pendingSince: value.pendingSince as number | null, queue: log.queue },
      version: value.version,
      lastChange: version >= 4 ? (value.lastChange as ChangeKind) : 'record',
      messages: log.messages,
      deliveries: (value.deliveries as SnapshotDelivery[]).map((d) => ({
        messageSeq: d.messageSeq ?? (value.messageSeq as number),
        kind: kindOf(d),
        platform: d.platform,
        url: d.url,
        payload: d.payload,
        attempts: d.attempts,
        nextAttemptAt: d.nextAttemptAt,
        expiresAt: d.expiresAt,
      })),
    },
  };
}
