// The message queue of an endpoint, pure. Every accepted message (`trigger=true`) is appended to the
// endpoint's message log; the row keeps a summary of the messages some platform has not read yet (its
// queue, oldest first), so that every rule below decides from the row alone, and the store applies
// the log writes it returns in the same transaction as the row.
//
// Rules:
// - A message is never replaced, superseded or dropped by a newer one. It leaves the queue when every
//   platform it was for has read it, or when its platforms that have not are given up (`expired`):
//   after the message TTL, or when the community withdraws it (`trigger=false`).
// - Bounds: at most MESSAGE_QUEUE_LIMITS.messages unread messages, and MESSAGE_QUEUE_LIMITS.bytes of
//   their content, per endpoint. A message past either is refused (the caller answers 429); nothing
//   already accepted is touched.
import { type Platform, PLATFORMS } from './record.ts';

/** One unread message in the row's summary. */
export interface QueuedMessage {
  /** Its number (the endpoint's message sequence). */
  n: number;
  /** Platforms that have not read it yet, as a PLATFORM_BITS mask (never 0 while queued). */
  u: number;
  /** When it was accepted (epoch ms). */
  at: number;
  /** Its content's size in UTF-8 bytes (what the byte bound counts). */
  b: number;
  /** The platform that sent it (absent for messages queued before senders were kept). */
  s?: Platform | null;
}

export interface QueueLimits {
  messages: number;
  bytes: number;
}

export const MESSAGE_QUEUE_LIMITS: QueueLimits = {
  /** Unread messages per endpoint. */
  messages: 1_000,
  /** UTF-8 bytes of the unread messages' content per endpoint. */
  bytes: 4 * 1024 * 1024,
};

/** How long read messages stay in the log for catch-up: at least the newest `count` of an endpoint, none older than `maxAgeMs`. */
export const MESSAGE_RETENTION = { count: 1_000, maxAgeMs: 24 * 60 * 60_000 } as const;

export const PLATFORM_BITS: Record<Platform, number> = { chat_a: 1, chat_b: 2, chat_c: 4, chat_d: 8 };

export const maskOf = (platforms: Iterable<Platform>): number => {
  let mask = 0;
  for (const p of platforms) mask |= PLATFORM_BITS[p];
  return mask;
};

export const platformsIn = (mask: number): Platform[] => PLATFORMS.filter((p) => (mask & PLATFORM_BITS[p]) !== 0);

/** A message's state for one platform, or over all of them (`read` once none is pending or expired). */
export type MessageStatus = 'pending' | 'read' | 'expired';

export function statusOf(unread: number, expired: number, platform?: Platform): MessageStatus {
  const bits = platform === undefined ? 15 : PLATFORM_BITS[platform];
  if ((unread & bits) !== 0) return 'pending';
  return (expired & bits) !== 0 ? 'expired' : 'read';
}

/** A write of one logged message's read state: `unread` is its new mask, `expired` bits are added. */
export interface MessageSettlement {
  number: number;
  unread: number;
  expired: number;
}

/** A message to append to the log. */
export interface NewMessage {
  number: number;
  sender: Platform | null;
  senderChannel: string | null;
  /** The message object's JSON text (the interface's `meta.message`). */
  message: string;
  unread: number;
  createdAt: number;
  /** The number of the message it natively replies to (domain/messageIds.ts), if any. */
  replyTo?: number | null;
}

/**
 * A copy's ID on a platform: the sender's own, or the one a receiving platform's bot (markRead) or
 * webhook (on delivery) reported. It replaces the ID the copy had; an ID another kept message of that
 * platform has already is not recorded (the caller refuses a known duplicate beforehand).
 */
export interface MessageIdClaim {
  number: number;
  platform: Platform;
  id: string;
}

/** A logged message's new text: an edit, or a delete (whose text is the initial message's). */
export interface MessageRewrite {
  number: number;
  /** The message object's JSON text. */
  message: string;
  /** Epoch ms of the edit or delete. */
  at: number;
  deleted: boolean;
}

/** What a decision writes to the message log, in the row's transaction. */
export interface MessageLogWrite {
  append?: NewMessage;
  settle?: MessageSettlement[];
  ids?: MessageIdClaim[];
  rewrite?: MessageRewrite;
}

/** The queue's oldest message, or the oldest that `platform` has not read. */
export function headOf(queue: readonly QueuedMessage[], platform?: Platform): QueuedMessage | undefined {
  if (platform === undefined) return queue[0];
  const bit = PLATFORM_BITS[platform];
  return queue.find((m) => (m.u & bit) !== 0);
}

/** Why one more message of `bytes` would pass a bound, or undefined when it fits. */
export function queueFullProblem(
  queue: readonly QueuedMessage[],
  bytes: number,
  limits: QueueLimits = MESSAGE_QUEUE_LIMITS,
): string | undefined {
  if (queue.length >= limits.messages) {
    return `the endpoint has ${queue.length} unread messages, the most it keeps (${limits.messages}); retry once platforms have read some`;
  }
  const held = queue.reduce((sum, m) => sum + m.b, 0);
  if (held + bytes > limits.bytes) {
    return `the endpoint's unread messages hold ${held} bytes; this one (${bytes}) would pass the bound of ${limits.bytes}; retry once platforms have read some`;
  }
  return undefined;
}

/** Appends a message that `unread` platforms have still to read (a message nobody else needs is not queued). */
export function enqueue(queue: readonly QueuedMessage[], message: QueuedMessage): readonly QueuedMessage[] {
  return message.u === 0 ? queue : [...queue, message];
}

export interface QueueChange {
  queue: readonly QueuedMessage[];
  settle: MessageSettlement[];
}

/**
 * `platform` has read message `number`; without a number, the oldest it has not read. Nothing changes
 * when it has read that message already (or the message left the queue): marking is idempotent.
 */
export function markQueued(
  queue: readonly QueuedMessage[],
  platform: Platform,
  number?: number,
): QueueChange & { marked: number | undefined } {
  const bit = PLATFORM_BITS[platform];
  const target = number === undefined ? headOf(queue, platform) : queue.find((m) => m.n === number && (m.u & bit) !== 0);
  if (!target) return { queue, settle: [], marked: undefined };
  const unread = target.u & ~bit;
  const next = unread === 0 ? queue.filter((m) => m !== target) : queue.map((m) => (m === target ? { ...m, u: unread } : m));
  return { queue: next, settle: [{ number: target.n, unread, expired: 0 }], marked: target.n };
}

/**
 * Gives up the platforms that have not read the messages `which` selects (expired, kept in the log),
 * optionally only `platform`'s copy.
 */
export function expireQueued(
  queue: readonly QueuedMessage[],
  which: (m: QueuedMessage) => boolean,
  platform?: Platform,
): QueueChange & { expired: { number: number; platforms: Platform[] }[] } {
  const bits = platform === undefined ? 15 : PLATFORM_BITS[platform];
  const settle: MessageSettlement[] = [];
  const expired: { number: number; platforms: Platform[] }[] = [];
  const next: QueuedMessage[] = [];
  for (const m of queue) {
    const given = which(m) ? m.u & bits : 0;
    if (given === 0) {
      next.push(m);
      continue;
    }
    const unread = m.u & ~given;
    settle.push({ number: m.n, unread, expired: given });
    expired.push({ number: m.n, platforms: platformsIn(given) });
    if (unread !== 0) next.push({ ...m, u: unread });
  }
  return { queue: next, settle, expired };
}

/**
 * Takes message `number` out of the queue for every platform that has not read it, as read: it was
 * deleted, so none of them is to get it. Nothing changes when no platform has it left to read.
 */
export function withdrawQueued(queue: readonly QueuedMessage[], number: number): QueueChange {
  const target = queue.find((m) => m.n === number);
  if (!target) return { queue, settle: [] };
  return { queue: queue.filter((m) => m !== target), settle: [{ number, unread: 0, expired: 0 }] };
}

/** The queue as the row stores it (JSON text), and back; an empty queue is `[]`. */
export const queueJson = (queue: readonly QueuedMessage[] | undefined): string =>
  queue === undefined || queue.length === 0 ? '[]' : JSON.stringify(queue);

const EMPTY: readonly QueuedMessage[] = Object.freeze([]);

export const parseQueue = (text: string | null | undefined): readonly QueuedMessage[] =>
  !text || text === '[]' ? EMPTY : (JSON.parse(text) as QueuedMessage[]);
