// The message lifecycle, pure. An endpoint is idle (nothing unread) or has a queue of unread messages
// (messageQueue.ts). `trigger=true` appends a message; the record's `meta` then shows it (what event
// streams carry, and the sender's answer); each platform marks the messages it relayed, in any order;
// when every queued message is read (or given up after the TTL), the record returns to idle. Config is
// never touched here.
import { platformRefusal, platformToMark } from './actingPlatform.ts';
import type { Forbidden } from './botRights.ts';
import {
  enqueue,
  expireQueued,
  type MessageLogWrite,
  type MessageSettlement,
  markQueued,
  PLATFORM_BITS,
  type QueuedMessage,
} from './messageQueue.ts';
import type { Decision, DeliveryDraft, MessageState, Row } from './row.ts';
import { type EndpointRecord, type Platform, PLATFORMS, WEBHOOK_PLATFORMS, emptyMessage, initialRecord } from './record.ts';

export type { Row };

export const isPending = (r: EndpointRecord) => r.meta.trigger;

/** The state of a queue: `pendingSince` is its oldest message's time. */
export const stateOf = (seq: number, queue: readonly QueuedMessage[]): MessageState => ({
  seq,
  pendingSince: queue[0]?.at ?? null,
  queue,
});

/** Back to idle: the message and its read flags are cleared; config stays as it is. */
export function resetToIdle(row: Row): Row {
  const meta = initialRecord().meta;
  meta.message = emptyMessage();
  return { record: { config: row.record.config, meta }, state: stateOf(row.state.seq, []) };
}

/** Nothing left unread: the record returns to idle. */
export function settle(row: Row): Row {
  return row.state.queue.length === 0 && isPending(row.record) ? resetToIdle(row) : row;
}

/** The lifecycle effect of an applied update, with what it writes to the message log. */
export interface UpdateEffect {
  row: Row;
  messages?: MessageLogWrite;
}

/**
 * `trigger=true` appends a message (number seq + 1, accepted `now`) that the platforms whose read flag
 * the update left false have to read: older unread messages stay queued before it. `trigger=false`
 * withdraws every unread message (its platforms that had not read it are given up: expired). Other
 * updates leave the queue as it is.
 */
export function afterUpdate(previous: Pick<Row, 'state'>, record: EndpointRecord, trigger: boolean | undefined, now: number): UpdateEffect {
  const { seq, queue } = previous.state;
  if (trigger === true) {
    const number = seq + 1;
    const message = JSON.stringify(record.meta.message);
    const unread = PLATFORMS.reduce((mask, p) => (record.meta.read[p] ? mask : mask | PLATFORM_BITS[p]), 0);
    const next = enqueue(queue, { n: number, u: unread, at: now, b: Buffer.byteLength(message), s: record.meta.sender });
    const replyTo = record.meta.message.reply.number;
    const append = {
      ...{ number, sender: record.meta.sender, senderChannel: record.meta['sender-channel'], message, unread, createdAt: now },
      ...(replyTo !== undefined && { replyTo }),
    };
    return { row: settle({ record, state: stateOf(number, next) }), messages: { append } };
  }
  if (trigger === false && queue.length > 0) {
    const withdrawn = expireQueued(queue, () => true);
    return { row: settle({ record, state: stateOf(seq, withdrawn.queue) }), messages: { settle: withdrawn.settle } };
  }
  return { row: settle({ record, state: previous.state }) };
}

/** Sets the newest message's read flags in the record when it is among `settled` (the record shows it). */
function flagNewest(row: Row, settled: MessageSettlement[]): Row {
  const newest = settled.find((s) => s.number === row.state.seq);
  if (!newest || !isPending(row.record)) return row;
  const done = PLATFORMS.filter((p) => (newest.unread & PLATFORM_BITS[p]) === 0 && !row.record.meta.read[p]);
  if (done.length === 0) return row;
  const record = structuredClone(row.record);
  for (const p of done) record.meta.read[p] = true;
  return { record, state: row.state };
}

/** `platform` has read message `number` (without one: the oldest it has not read). */
export function markRead(row: Row, platform: Platform, number?: number): UpdateEffect & { marked: number | undefined } {
  const change = markQueued(row.state.queue, platform, number);
  if (change.marked === undefined) return { row, marked: undefined };
  const next = flagNewest({ record: row.record, state: stateOf(row.state.seq, change.queue) }, change.settle);
  return { row: settle(next), messages: { settle: change.settle }, marked: change.marked };
}

/** Whether the oldest unread message has been waiting for the TTL. */
export function isExpired(row: Row, now: number, ttlMs: number): boolean {
  return row.state.pendingSince !== null && now - row.state.pendingSince >= ttlMs;
}

export interface Expiry extends UpdateEffect {
  expired: { number: number; platforms: Platform[] }[];
}

/**
 * Gives up the unread copies of every message older than the TTL (or, with `only`, one platform's copy
 * of one message: its webhook refused it, or the TTL ran out before it answered). They stay in the
 * log as `expired` and stop holding their platforms' queues.
 */
export function expireMessages(row: Row, select: { now: number; ttlMs: number } | { number: number; platform: Platform }): Expiry {
  const outcome =
    'now' in select
      ? expireQueued(row.state.queue, (m) => select.now - m.at >= select.ttlMs)
      : expireQueued(row.state.queue, (m) => m.n === select.number, select.platform);
  if (outcome.settle.length === 0) return { row, expired: [] };
  const next = flagNewest({ record: row.record, state: stateOf(row.state.seq, outcome.queue) }, outcome.settle);
  return { row: settle(next), messages: { settle: outcome.settle }, expired: outcome.expired };
}

/**
 * Deliveries the service makes itself for a self-user endpoint's newest message: the bridge is the
 * position of `sender-channel` in the sender's channel list, and each webhook platform other than the
 * sender gets the webhook at that position, if it has one. `payloadFor` renders the body for one
 * receiving platform (a native reply names that platform's copy), undefined when the message has
 * nothing a webhook could show.
 */
export function planDeliveries(
  row: Row,
  expiresAt: number,
  payloadFor: (record: EndpointRecord, platform: Platform) => string | undefined,
): DeliveryDraft[] {
  const { config, meta } = row.record;
  if (!config['self-user'] || !isPending(row.record) || meta.sender === null || meta['sender-channel'] === null) return [];
  const bridge = config.channels[meta.sender].indexOf(meta['sender-channel']);
  if (bridge < 0) return [];
  return WEBHOOK_PLATFORMS.filter((p) => p !== meta.sender && !meta.read[p]).flatMap((platform) => {
    const url = config.webhooks[platform][bridge];
    const payload = url === undefined ? undefined : payloadFor(row.record, platform);
    return payload === undefined ? [] : [{ platform, url: url!, payload, expiresAt }];
  });
}

/** Whether `platform` still has message `number` to read (a delivery of it still applies). */
export function stillUnread(state: MessageState, number: number, platform: Platform): boolean {
  return state.queue.some((m) => m.n === number && (m.u & PLATFORM_BITS[platform]) !== 0);
}

export type MarkReadResult = { kind: 'ok'; row: Row } | { kind: 'no such message'; newest: number };

/**
 * markRead's decision. `named`, when given, is the message the platform relayed; marking a message
 * that platform has read already (or that expired for it) changes nothing and is not an error, so a
 * bot may repeat an acknowledgement. A number that was never issued is refused. `copyId`, with
 * `named`, is the ID of the copy the platform posted: recorded with the message (a repeated report
 * changes nothing).
 */
export function decideMarkRead(current: Row, platform: Platform, named: number | undefined, copyId?: string): Decision<MarkReadResult> {
  if (named !== undefined && (named < 1 || named > current.state.seq)) {
    return { result: { kind: 'no such message', newest: current.state.seq } };
  }
  const next = markRead(current, platform, named);
  const ids = copyId !== undefined && named !== undefined ? [{ number: named, platform, id: copyId }] : undefined;
  if (next.marked === undefined && ids === undefined) return { result: { kind: 'ok', row: current } };
  const messages = { ...next.messages, ...(ids && { ids }) };
  return { write: { ...next.row, messages }, result: { kind: 'ok', row: next.row } };
}

export type MarkReadAsResult =
  | { kind: 'ok'; row: Row; platform: Platform }
  | Exclude<MarkReadResult, { kind: 'ok' }>
  | Forbidden
  /** Neither named nor known from the credential (the admin token names none). */
  | { kind: 'no platform' };

/**
 * markRead for a request acting for `acting` (a bot key's platform; undefined: the endpoint's token or
 * the admin token): it marks `named`, else its own platform, and a bot key may mark only its own.
 */
export function decideMarkReadAs(
  acting: Platform | undefined,
  named: Platform | undefined,
  current: Row,
  number: number | undefined,
  copyId?: string,
): Decision<MarkReadAsResult> {
  const refusal = platformRefusal(acting, named, 'platform');
  if (refusal) return { result: { kind: 'forbidden', detail: refusal } };
  const platform = platformToMark(acting, named);
  if (platform === undefined) return { result: { kind: 'no platform' } };
  const decision = decideMarkRead(current, platform, number, copyId);
  const { result } = decision;
  return { ...decision, result: result.kind === 'ok' ? { ...result, platform } : result };
}
