// What an authenticated updateEndpoint request does to an endpoint's row: the update rules, the
// message lifecycle and the deliveries to queue, decided together so that the store can commit them
// in one transaction. Pure: the caller supplies the clock, the policy and the payload renderer.
import { platformRefusal } from './actingPlatform.ts';
import { type Forbidden, forbiddenFor, updateRefusals } from './botRights.ts';
import type { Issue } from './issues.ts';
import { afterUpdate, planDeliveries } from './lifecycle.ts';
import type { NativeReply } from './messageIds.ts';
import { type QueueLimits, queueFullProblem } from './messageQueue.ts';
import type { EndpointRecord, Platform } from './record.ts';
import type { Decision, MessageState } from './row.ts';
import { applyUpdate, type UpdateParams, type UpdatePolicy } from './update.ts';

/** The row as committed: the record's JSON text exactly as stored, and its lifecycle facts. */
export interface CommittedRow {
  recordJson: string;
  state: MessageState;
}

export interface UpdateContext extends UpdatePolicy {
  /** Epoch ms of the request. */
  now: number;
  /** How long a message's webhook copies may be attempted. */
  messageTtlMs: number;
  /** The webhook body of a pending message for one platform, or undefined when it has nothing a webhook could show. */
  webhookBody: (record: EndpointRecord, platform: Platform) => string | undefined;
  /** Unread messages an endpoint may hold (default MESSAGE_QUEUE_LIMITS). */
  queueLimits?: QueueLimits | undefined;
  /** The logged message `message_reply_to` names, when the log has it (the caller looks it up). */
  reply?: NativeReply | undefined;
}

export type UpdateResult =
  /** `json`: the record's JSON text, sent as it is (it is what was committed). */
  | { kind: 'ok'; record: EndpointRecord; json: string; queued: number; state: MessageState }
  | { kind: 'invalid'; issues: Issue[] }
  /** The endpoint's unread messages are at a bound: the message is refused, nothing is changed. */
  | { kind: 'queue full'; detail: string };

export function decideUpdate(current: CommittedRow, params: UpdateParams, context: UpdateContext): Decision<UpdateResult> {
  const outcome = applyUpdate(current.recordJson, params, context, context.reply);
  if (!outcome.ok) return { result: { kind: 'invalid', issues: outcome.issues } };
  const unchanged = (record: EndpointRecord, json: string): Decision<UpdateResult> => ({
    result: { kind: 'ok', record, json, queued: 0, state: current.state },
  });
  // Nothing to write: nothing changed, and no message starts or ends (trigger=false while idle is a no-op).
  const endsNothing = params.trigger === undefined || (params.trigger === false && current.state.pendingSince === null);
  if (params.only_check === true || (!outcome.changed && endsNothing)) return unchanged(outcome.record, outcome.json);

  if (params.trigger === true) {
    const full = queueFullProblem(current.state.queue, Buffer.byteLength(JSON.stringify(outcome.record.meta.message)), context.queueLimits);
    if (full !== undefined) return { result: { kind: 'queue full', detail: full } };
  }
  const { row, messages } = afterUpdate(current, outcome.record, params.trigger, context.now);
  // The lifecycle may have replaced the record (a finished message returns to idle).
  const json = row.record === outcome.record ? outcome.json : JSON.stringify(row.record);
  // A message that finished at once (no other platform has channels) on an idle endpoint leaves the
  // record as it was: nothing to write, and no event for a change that is not one.
  if (json === current.recordJson && row.state.pendingSince === null && current.state.pendingSince === null) {
    return unchanged(row.record, json);
  }
  const deliveries = params.trigger === true ? planDeliveries(row, context.now + context.messageTtlMs, context.webhookBody) : [];
  const claim = params.message_id !== undefined && params.sender !== undefined && messages?.append;
  const logged = claim
    ? { ...messages, ids: [{ number: messages.append!.number, platform: params.sender!, id: params.message_id! }] }
    : messages;
  return {
    write: { ...row, recordJson: json, deliveries, ...(logged && { messages: logged }) },
    result: { kind: 'ok', record: row.record, json, queued: deliveries.length, state: row.state },
  };
}

/**
 * updateEndpoint for a request acting for `acting` (a bot key's platform; undefined: the endpoint's
 * token or the admin token, which may change anything): what the key may not do is refused with
 * nothing applied (botRights.ts), else the update is decided.
 */
export function decideUpdateAs(
  acting: Platform | undefined,
  current: CommittedRow & { record: EndpointRecord },
  params: UpdateParams,
  context: UpdateContext,
): Decision<UpdateResult | Forbidden> {
  if (acting !== undefined) {
    const refusal = platformRefusal(acting, params.sender, 'sender');
    if (refusal) return { result: { kind: 'forbidden', detail: refusal } };
    const forbidden = forbiddenFor(acting, updateRefusals(current.record, acting, params, current.state.queue));
    if (forbidden) return { result: forbidden };
  }
  return decideUpdate(current, params, context);
}
