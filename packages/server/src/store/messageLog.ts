// The message log port: every message an endpoint accepted, kept until every platform has it and then
// for catch-up (MESSAGE_RETENTION). Writes to the log ride on the endpoint's own transaction (a
// decision's `write.messages`, applied by the adapter with the row), so a message is logged exactly
// when its endpoint's row says so; this port reads the log and sweeps it.
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
}

export interface MessageLog {
  /**
   * Up to `limit` messages of the endpoint numbered above `after`, ascending; with `platform`, only
   * those that platform has not read yet.
   */
  list(endpointId: string, after: number, limit: number, platform?: Platform): Promise<LoggedMessage[]>;
  /** One message, if the log still keeps it. */
  get(endpointId: string, number: number): Promise<LoggedMessage | undefined>;
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
}

export const toLoggedMessage = (r: MessageRow): LoggedMessage => ({
  number: Number(r.number),
  sender: r.sender as Platform | null,
  senderChannel: r.sender_channel,
  message: r.message,
  unread: r.unread,
  expired: r.expired,
  createdAt: Number(r.created_at),
});
