// The message lifecycle, pure. States: idle (trigger false, message fields initial) and pending
// (trigger true). trigger=true starts a message (a new sequence number); when every platform has read
// it, or its TTL passes, the record returns to idle. Config is never touched here.
import type { Decision, DeliveryDraft, Row } from './row.ts';
import { type EndpointRecord, type Platform, PLATFORMS, WEBHOOK_PLATFORMS, emptyMessage, initialRecord } from './record.ts';

export type { Row };

export const isPending = (r: EndpointRecord) => r.meta.trigger;
export const allRead = (r: EndpointRecord) => PLATFORMS.every((p) => r.meta.read[p]);

/** Back to idle: the message and its read flags are cleared; config stays as it is. */
export function resetToIdle(row: Row): Row {
  const meta = initialRecord().meta;
  meta.message = emptyMessage();
  return { record: { config: row.record.config, meta }, state: { seq: row.state.seq, pendingSince: null } };
}

/** A pending message that every platform has read is finished: the record returns to idle. */
export function settle(row: Row): Row {
  return isPending(row.record) && allRead(row.record) ? resetToIdle(row) : row;
}

/**
 * The lifecycle effect of an applied update. `trigger=true` starts a new message (sequence + 1,
 * pending from `now`), replacing any pending one; `trigger=false` ends the pending message without
 * clearing its fields (its undelivered copies are dropped).
 */
export function afterUpdate(previous: Pick<Row, 'state'>, record: EndpointRecord, trigger: boolean | undefined, now: number): Row {
  let state = previous.state;
  if (trigger === true) state = { seq: state.seq + 1, pendingSince: now };
  else if (!isPending(record)) state = { seq: state.seq, pendingSince: null };
  return settle({ record, state });
}

/** Marks a platform read; only a pending message has read flags to set. */
export function markRead(row: Row, platform: Platform): Row {
  if (!isPending(row.record) || row.record.meta.read[platform]) return row;
  const record = structuredClone(row.record);
  record.meta.read[platform] = true;
  return settle({ record, state: row.state });
}

/** The TTL passed: an unfinished pending message is dropped. */
export function isExpired(row: Row, now: number, ttlMs: number): boolean {
  return row.state.pendingSince !== null && now - row.state.pendingSince >= ttlMs;
}

/**
 * Deliveries the service makes itself for a self-user endpoint's pending message: the bridge is the
 * position of `sender-channel` in the sender's channel list, and each webhook platform other than the
 * sender gets the webhook at that position, if it has one. `payloadFor` returns undefined when the
 * message has nothing a webhook could show.
 */
export function planDeliveries(row: Row, expiresAt: number, payloadFor: (record: EndpointRecord) => string | undefined): DeliveryDraft[] {
  const { config, meta } = row.record;
  if (!config['self-user'] || !isPending(row.record) || meta.sender === null || meta['sender-channel'] === null) return [];
  const bridge = config.channels[meta.sender].indexOf(meta['sender-channel']);
  const payload = bridge < 0 ? undefined : payloadFor(row.record);
  if (payload === undefined) return [];
  return WEBHOOK_PLATFORMS.filter((p) => p !== meta.sender && !meta.read[p]).flatMap((platform) => {
    const url = config.webhooks[platform][bridge];
    return url === undefined ? [] : [{ platform, url, payload, expiresAt }];
  });
}

export type MarkReadResult = { kind: 'ok'; row: Row } | { kind: 'not pending'; pending: number | undefined };

/**
 * markRead's decision. `named`, when given, is the message the platform relayed: a late acknowledgement
 * of a message that a newer one replaced must not mark the newer one.
 */
export function decideMarkRead(current: Row, platform: Platform, named: number | undefined): Decision<MarkReadResult> {
  const pending = current.state.pendingSince === null ? undefined : current.state.seq;
  if (named !== undefined && named !== pending) return { result: { kind: 'not pending', pending } };
  const next = markRead(current, platform);
  return next === current ? { result: { kind: 'ok', row: current } } : { write: next, result: { kind: 'ok', row: next } };
}
