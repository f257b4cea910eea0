// The IDs of a message's copies, pure. A message in the log knows, per platform, the ID of its copy
// there: the sender's own (updateEndpoint's `message_id`), and each receiving platform's (reported by
// its bot through markRead's `message_id`, or learned from the webhook's answer on `selfuse`
// delivery). An ID names one kept message per endpoint and platform, so any copy's ID finds the
// message, and a reply or an edit made on one platform reaches the copies on the others.
import type { Issue } from './issues.ts';
import { queryIssue } from './issues.ts';
import type { Message, Platform } from './record.ts';

/** Per platform, the ID of the message's copy there (a platform without a known copy is absent). */
export type MessageIds = Partial<Record<Platform, string>>;

/** 1 to 100 printable ASCII characters without spaces: what chat platforms use as message IDs. */
export const MESSAGE_ID = /^[!-~]{1,100}$/;

export const isMessageId = (value: unknown): value is string => typeof value === 'string' && MESSAGE_ID.test(value);

/** A message named by its number, or by the ID of its copy on a platform. */
export type MessageRef = { number: number } | { platform: Platform; id: string };

/** The message a native reply answers: its number, and its copies' IDs as known when the reply was accepted. */
export interface NativeReply {
  number: number;
  ids: MessageIds;
}

/** The number of the message `message` natively replies to; undefined for any other message. */
export const nativeReplyTarget = (message: Pick<Message, 'isReply' | 'reply'>): number | undefined =>
  message.isReply ? message.reply.number : undefined;

/** The replied-to message as the log has it now. */
export interface ReplyTarget {
  ids: MessageIds;
  deletedAt: number | null;
}

/**
 * The IDs a native reply names its target by, as of now: the IDs the reply was accepted with, updated
 * by the target's copies the log knows now. A copy made after the reply was accepted (a webhook's
 * answer, a bot's report, both come in each platform's order) is named too, and a newer report
 * replaces an older ID. A target gone from the log, or deleted since, leaves them as accepted.
 */
export function currentReplyIds(accepted: MessageIds | undefined, target: ReplyTarget | undefined): MessageIds {
  if (!target || target.deletedAt !== null) return { ...accepted };
  return { ...accepted, ...target.ids };
}

/**
 * Why `message_id` / `message_reply_to` cannot go with this update: both name copies on the sender's
 * platform of a new message, so they need `trigger=true` and `sender`.
 */
export function newMessageIdIssues(params: {
  message_id?: string;
  message_reply_to?: string;
  trigger?: boolean;
  sender?: Platform;
}): Issue[] {
  const issues: Issue[] = [];
  for (const name of ['message_id', 'message_reply_to'] as const) {
    if (params[name] === undefined || (params.trigger === true && params.sender !== undefined)) continue;
    issues.push(queryIssue(name, "names a copy on the sender's platform of a new message: it needs trigger=true and sender"));
  }
  return issues;
}

/** The problem detail of an ID that another kept message of the platform has already. */
export const duplicateIdDetail = (platform: Platform, id: string, number: number): string =>
  `${platform} message ID '${id}' belongs to message ${number} already: an ID names one message per endpoint and platform. Nothing was applied.`;

/** The query parameters that name a message (getMessage, editMessage, deleteMessage). */
export interface MessageNaming {
  number?: number;
  platform?: Platform;
  message_id?: string;
}

export type MessageRefOutcome = { ok: true; ref: MessageRef } | { ok: false; issues: Issue[] };

/** The message the parameters name: by `number`, or by `platform` and `message_id`; exactly one way. */
export function messageRefOf(q: MessageNaming): MessageRefOutcome {
  const byId = q.platform !== undefined || q.message_id !== undefined;
  if (q.number !== undefined && byId) {
    return { ok: false, issues: [queryIssue('number', 'name the message by number, or by platform and message_id, not both')] };
  }
  if (q.number !== undefined) return { ok: true, ref: { number: q.number } };
  if (q.platform !== undefined && q.message_id !== undefined) return { ok: true, ref: { platform: q.platform, id: q.message_id } };
  if (q.platform !== undefined) return { ok: false, issues: [queryIssue('message_id', 'is required with platform')] };
  if (q.message_id !== undefined) return { ok: false, issues: [queryIssue('platform', 'is required with message_id')] };
  return { ok: false, issues: [queryIssue('number', 'name the message by number, or by platform and message_id')] };
}

/** The problem detail of a message the log does not keep. */
export const noSuchMessageDetail = (ref: MessageRef): string =>
  'number' in ref
    ? `The log keeps no message ${ref.number}: it was never sent, or is past retention.`
    : `The log keeps no message whose ${ref.platform} ID is '${ref.id}': it was never reported, or the message is past retention.`;
