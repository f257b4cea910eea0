// The record as one reader sees it. The stored record's `meta` shows the newest message (what the
// sender's answer and event streams carry); a reader is shown the oldest message it still has to
// relay instead, so a bot that loops "read, relay if unread, mark read" walks the queue in order:
// - seen by a platform: the oldest message that platform has not read;
// - seen by nobody in particular (a token without `platform`), or by a platform that has read
//   everything while others have not: the oldest message some platform has not read;
// - nothing unread: the stored record (idle).
// `read` flags show which platforms still have that message to read (false) and which have nothing
// left to do with it (true: read, or given up after the TTL).
import { headOf, PLATFORM_BITS, type QueuedMessage } from './messageQueue.ts';
import { type EndpointRecord, type Message, type Platform, PLATFORMS } from './record.ts';
import type { MessageState } from './row.ts';

/** Which message a reader is shown: undefined when the stored record is the answer as it is. */
export function shownMessage(state: MessageState, platform?: Platform): QueuedMessage | undefined {
  return (platform === undefined ? undefined : headOf(state.queue, platform)) ?? headOf(state.queue);
}

/** The number the answer's `Chatbridge-Message-Number` names: the message shown, none while idle. */
export function shownNumber(state: MessageState, platform?: Platform): number | undefined {
  return shownMessage(state, platform)?.n ?? (state.pendingSince === null ? undefined : state.seq);
}

/** A logged message as the record's `meta` needs it. */
export interface MessageForView {
  sender: Platform | null;
  senderChannel: string | null;
  /** The message object's JSON text. */
  message: string;
}

/** The record with `meta` showing `logged`, a queued message with `unread` platforms. */
export function viewRecord(record: EndpointRecord, logged: MessageForView, unread: number): EndpointRecord {
  const read = Object.fromEntries(PLATFORMS.map((p) => [p, (unread & PLATFORM_BITS[p]) === 0])) as Record<Platform, boolean>;
  return {
    config: record.config,
    meta: {
      message: JSON.parse(logged.message) as Message,
      read,
      sender: logged.sender,
      'sender-channel': logged.senderChannel,
      trigger: true,
    },
  };
}
