// The message log port: every message an endpoint accepted, kept until every platform has it and then
// for catch-up (MESSAGE_RETENTION). Writes to the log ride on the endpoint's own transaction (a
// decision's `write.messages`, applied by the adapter with the row), so a message is logged exactly
// when its endpoint's row says so; this port reads the log and sweeps it.
import type { MessageIds } from '../domain/messageIds.ts';
import type { MessageStatus } from '../domain/messageQueue.ts';
import type { Platform } from '../domain/record.ts';

export type { MessageStatus };

/** One logged message. */
export interface LoggedMessage {
  number: number;
  sender: Platform | null;
  senderChannel: string | null;
  /** The message object's JSON text, as accepted. */
  message: string;
  /** Platforms that have not read it yet (a PLATFORM_BITS mask). */
  unread: number;
  /** Platforms whose copy was given up (a PLATFORM_BITS mask). */
  expired: number;
  /** When it was accepted (epoch ms). */
  createdAt: number;
  /** Its copies' IDs per platform, as far as they are known. */
  ids: MessageIds;
  /** The number of the message it natively replies to. */
  replyTo: number | null;
  /** Times it was edited. */
  edits: number;
  /** When it was last edited (epoch ms). */
  editedAt: number | null;
  /** When it was deleted (epoch ms); its `message` is then the initial message's. */
  deletedAt: number | null;
}

export interface MessageLog {
  /**
   * Up to `limit` messages of the endpoint numbered above `after`, ascending; with `platform`, only
   * those that platform has not read yet.
   */
  list(endpointId: string, after: number, limit: number, platform?: Platform): Promise<LoggedMessage[]>;
  /** One message, if the log still keeps it. */
  get(endpointId: string, number: number): Promise<LoggedMessage | undefined>;
  /** The kept message whose copy on `platform` has ID `id`, if any. */
  find(endpointId: string, platform: Platform, id: string): Promise<LoggedMessage | undefined>;
  /**
   * Deletes read messages past retention (older than its age, or beyond its count for their endpoint)
   * in batches, yielding to the event loop between them; returns how many.
   */
  prune(): Promise<number>;
}

/** A log row as both SQL adapters read it. */
export interface MessageRow {
  number: number | string;
  sender: string | null;
  sender_channel: string | null;
  message: string;
  unread: number;
  expired: number;
  created_at: number | string;
  reply_to: number | string | null;
  edits: number;
  edited_at: number | string | null;
  deleted_at: number | string | null;
}

/** A message_ids row as both SQL adapters read it. */
export interface MessageIdRow {
  number: number | string;
  platform: string;
  message_id: string;
}

/** The columns of a MessageRow, in both adapters. */
export const MESSAGE_COLUMNS =
  'number, sender, sender_channel, message, unread, expired, created_at, reply_to, edits, edited_at, deleted_at';

const numberOrNull = (v: number | string | null) => (v === null ? null : Number(v));

/** The log's rows with their IDs (rows of message_ids, for any of them). */
export function withIds(rows: readonly MessageRow[], idRows: readonly MessageIdRow[]): LoggedMessage[] {
  const ids = new Map<number, MessageIds>();
  for (const r of idRows) {
    const number = Number(r.number);
    const entry = ids.get(number) ?? {};
    entry[r.platform as Platform] = r.message_id;
    ids.set(number, entry);
  }
  return rows.map((r) => toLoggedMessage(r, ids.get(Number(r.number)) ?? {}));
}

export const toLoggedMessage = (r: MessageRow, ids: MessageIds): LoggedMessage => ({
  number: Number(r.number),
  sender: r.sender as Platform | null,
  senderChannel: r.sender_channel,
  message: r.message,
  unread: r.unread,
  expired: r.expired,
  createdAt: Number(r.created_at),
  ids,
  replyTo: numberOrNull(r.reply_to),
  edits: r.edits,
  editedAt: numberOrNull(r.edited_at),
  deletedAt: numberOrNull(r.deleted_at),
});
