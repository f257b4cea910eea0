// Edits and deletes of a logged message, pure. Only the platform that sent a message may change it (a
// bot key of another platform is refused; the endpoint token may change any). An edit replaces the
// message's content (and its attachments or embed when given); a delete keeps no text of it, and a
// platform that had not received it yet never will. Either way the log keeps the new version, an
// `edit` or `delete` event names the message and its IDs on every platform, and on `selfuse` each
// webhook copy is edited or deleted after its create, in the webhook's order.
//
// The log is read before the decision (it is not part of the row), so a decision is taken only on
// the row version the message was read at: any write of the endpoint in between (another edit, a
// delete, a delivery) makes the caller read the message again (`stale`).
import { platformRefusal } from './actingPlatform.ts';
import type { Forbidden } from './botRights.ts';
import { type Issue, queryIssue } from './issues.ts';
import { settle, stateOf } from './lifecycle.ts';
import type { MessageIds } from './messageIds.ts';
import { withdrawQueued } from './messageQueue.ts';
import { type EndpointRecord, type Message, type Platform, PLATFORMS, WEBHOOK_PLATFORMS, emptyMessage } from './record.ts';
import type { CopyCall, Decision, DeliveryDraft, Row } from './row.ts';
import { applyMessageFields, type MessageFieldParams } from './update.ts';

/** Edits a message keeps at most; past it an edit is refused. */
export const EDIT_LIMIT = 100;

/** A logged message as an edit or delete needs it. */
export interface LoggedCopy {
  number: number;
  sender: Platform | null;
  senderChannel: string | null;
  /** The message object's JSON text. */
  message: string;
  edits: number;
  /** When it was deleted (epoch ms), null while it stands. */
  deletedAt: number | null;
  ids: MessageIds;
}

/** The row as committed, with the version its message was read at. */
export interface VersionedRow extends Row {
  version: number;
}

export interface CopyChangeContext {
  now: number;
  /** How long the webhook copies' edit or delete may be attempted. */
  messageTtlMs: number;
  /** The webhook body of an edit of `message`, or undefined when it has nothing a webhook could show. */
  webhookEditBody: (message: Message) => string | undefined;
}

export type EditParams = Pick<MessageFieldParams, 'message_content' | 'message_attachments' | 'message_embed'>;

type Refusal =
  | Forbidden
  /** The endpoint changed since the message was read: read it again and decide anew. */
  | { kind: 'stale' }
  | { kind: 'gone' };

export type EditResult =
  | { kind: 'ok'; message: Message; edits: number; editedAt: number }
  | { kind: 'invalid'; issues: Issue[] }
  | { kind: 'deleted' }
  | { kind: 'edit limit'; limit: number }
  | Refusal;

export type DeleteResult = { kind: 'ok'; deletedAt: number; changed: boolean } | Refusal;

/** Why a request acting for `acting` may not change `logged`, if it may not. */
function refusal(acting: Platform | undefined, logged: LoggedCopy): Forbidden | undefined {
  if (acting === undefined || logged.sender === acting) return undefined;
  const detail =
    platformRefusal(acting, logged.sender ?? undefined, 'sender') ??
    `This bot key acts for ${acting}; the message came from no platform. Nothing was applied.`;
  return { kind: 'forbidden', detail: `${detail} Only the platform that sent a message may edit or delete it.` };
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The webhook calls that change a message's copies: one per webhook platform other than the sender's
 * with a webhook on the message's bridge, while `selfuse` is on. A copy the webhook never confirmed
 * (no ID) is left alone when its turn comes (the relay drops the call).
 */
function copyCalls(record: EndpointRecord, logged: LoggedCopy, kind: CopyCall, payload: string, expiresAt: number): DeliveryDraft[] {
  const { config } = record;
  if (!config['self-user'] || logged.sender === null || logged.senderChannel === null) return [];
  const bridge = config.channels[logged.sender].indexOf(logged.senderChannel);
  if (bridge < 0) return [];
  return WEBHOOK_PLATFORMS.filter((p) => p !== logged.sender).flatMap((platform) => {
    const url = config.webhooks[platform][bridge];
    return url === undefined ? [] : [{ kind, number: logged.number, platform, url, payload, expiresAt }];
  });
}

/** Whether the row's record shows `number` as its newest message, still pending. */
const showsNewest = (row: Row, number: number) => row.record.meta.trigger && row.state.seq === number;

function checked(current: VersionedRow | undefined, readAt: number, acting: Platform | undefined, logged: LoggedCopy): Refusal | undefined {
  if (!current) return { kind: 'gone' };
  if (current.version !== readAt) return { kind: 'stale' };
  return refusal(acting, logged);
}

/**
 * What is wrong with an edit's parameters, whatever message it names (so a bad request is answered
 * 400 before the message is looked up): it must change the text, attachments or embed, each valid.
 */
export function editParamsIssues(params: EditParams): Issue[] {
  if (params.message_content === undefined && params.message_attachments === undefined && params.message_embed === undefined) {
    return [queryIssue('message_content', 'an edit needs message_content, message_attachments or message_embed')];
  }
  const issues: Issue[] = [];
  applyMessageFields(emptyMessage(), params, issues);
  return issues;
}

export function decideEdit(
  acting: Platform | undefined,
  current: VersionedRow | undefined,
  readAt: number,
  logged: LoggedCopy,
  params: EditParams,
  context: CopyChangeContext,
): Decision<EditResult> {
  const refused = checked(current, readAt, acting, logged);
  if (refused) return { result: refused };
  const row = current!;
  const invalid = editParamsIssues(params);
  if (invalid.length > 0) return { result: { kind: 'invalid', issues: invalid } };
  if (logged.deletedAt !== null) return { result: { kind: 'deleted' } };
  if (logged.edits >= EDIT_LIMIT) return { result: { kind: 'edit limit', limit: EDIT_LIMIT } };
  const message = JSON.parse(logged.message) as Message;
  const issues: Issue[] = [];
  applyMessageFields(message, params, issues);
  if (issues.length > 0) return { result: { kind: 'invalid', issues } };

  const { now } = context;
  const json = JSON.stringify(message);
  const edits = logged.edits + 1;
  let record = row.record;
  if (showsNewest(row, logged.number)) {
    record = structuredClone(record);
    record.meta.message = message;
  }
  const body = context.webhookEditBody(message);
  const deliveries = body === undefined ? [] : copyCalls(record, logged, 'edit', body, now + context.messageTtlMs);
  const event = { number: logged.number, ids: logged.ids, message, edits, edited_at: iso(now) };
  return {
    write: {
      record,
      state: row.state,
      deliveries,
      messages: { rewrite: { number: logged.number, message: json, at: now, deleted: false } },
      event: { kind: 'edit', json: JSON.stringify(event) },
    },
    result: { kind: 'ok', message, edits, editedAt: now },
  };
}

/**
 * A delete: the log keeps the message's number, IDs and read state with the initial message's
 * fields; platforms that had not read it never get it (their queue moves on, their webhook's
 * unsent create is dropped), and the webhook copies made already are deleted. Deleting a deleted
 * message changes nothing.
 */
export function decideDelete(
  acting: Platform | undefined,
  current: VersionedRow | undefined,
  readAt: number,
  logged: LoggedCopy,
  context: Omit<CopyChangeContext, 'webhookEditBody'>,
): Decision<DeleteResult> {
  const refused = checked(current, readAt, acting, logged);
  if (refused) return { result: refused };
  if (logged.deletedAt !== null) return { result: { kind: 'ok', deletedAt: logged.deletedAt, changed: false } };
  const row = current!;
  const { now } = context;
  const withdrawn = withdrawQueued(row.state.queue, logged.number);
  let next: Row = { record: row.record, state: stateOf(row.state.seq, withdrawn.queue) };
  if (showsNewest(row, logged.number)) {
    // The record no longer shows its text, nor asks any platform to relay it.
    const record = structuredClone(row.record);
    record.meta.message = emptyMessage();
    for (const p of PLATFORMS) record.meta.read[p] = true;
    next = { record, state: next.state };
  }
  next = settle(next);
  const deliveries = copyCalls(next.record, logged, 'delete', '', now + context.messageTtlMs);
  const event = { number: logged.number, ids: logged.ids, deleted_at: iso(now) };
  return {
    write: {
      ...next,
      deliveries,
      messages: {
        rewrite: { number: logged.number, message: JSON.stringify(emptyMessage()), at: now, deleted: true },
        settle: withdrawn.settle,
      },
      event: { kind: 'delete', json: JSON.stringify(event) },
    },
    result: { kind: 'ok', deletedAt: now, changed: true },
  };
}
