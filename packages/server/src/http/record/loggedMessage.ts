// A logged message as the API shows it (listMessages' items, getMessage, editMessage and
// deleteMessage answers), and the lookup of a message a request names.
import type { components } from '@chatbridge/api';
import { type MessageRef, noSuchMessageDetail } from '../../domain/messageIds.ts';
import { PLATFORM_BITS, statusOf } from '../../domain/messageQueue.ts';
import { type Message, PLATFORMS, type Platform } from '../../domain/record.ts';
import type { LoggedMessage } from '../../store/messageLog.ts';
import type { EndpointStore } from '../../store/port.ts';
import { refinedProblem } from '../problem.ts';
import { withReplyTarget } from './replyIds.ts';

export type MessageItem = components['schemas']['LoggedMessage'];

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** `platform`: the reader's, whose state `state` gives (the state over all platforms without one). */
export const itemOf = (m: LoggedMessage, platform?: Platform): MessageItem => ({
  number: m.number,
  sender: m.sender,
  sender_channel: m.senderChannel,
  message: JSON.parse(m.message) as Message,
  read: Object.fromEntries(PLATFORMS.map((p) => [p, ((m.unread | m.expired) & PLATFORM_BITS[p]) === 0])) as Record<Platform, boolean>,
  state: statusOf(m.unread, m.expired, platform),
  created_at: new Date(m.createdAt).toISOString(),
  ids: m.ids,
  edits: m.edits,
  edited_at: iso(m.editedAt),
  deleted: m.deletedAt !== null,
});

/**
 * The items of `messages` (of one endpoint), each native reply naming its target's copies as the log
 * knows them now: a target listed beside it is taken from the list, the others are read, each once.
 */
export async function currentItems(
  store: EndpointStore,
  endpointId: string,
  messages: readonly LoggedMessage[],
  platform?: Platform,
): Promise<MessageItem[]> {
  const listed = new Map(messages.map((m) => [m.number, m]));
  const wanted = new Set(messages.flatMap((m) => (m.replyTo !== null && !listed.has(m.replyTo) ? [m.replyTo] : [])));
  const read = await Promise.all([...wanted].map((n) => store.messages.get(endpointId, n)));
  const targets = new Map([...listed, ...read.flatMap((m) => (m ? [[m.number, m] as const] : []))]);
  return messages.map((m) => {
    const item = itemOf(m, platform);
    return m.replyTo === null ? item : { ...item, message: withReplyTarget(item.message, targets.get(m.replyTo)) };
  });
}

/** One message's item, as currentItems gives it. */
export const currentItem = async (store: EndpointStore, endpointId: string, message: LoggedMessage): Promise<MessageItem> =>
  (await currentItems(store, endpointId, [message]))[0]!;

/** The message `ref` names, or a 404 problem when the log does not keep it. */
export async function namedMessage(store: EndpointStore, endpointId: string, ref: MessageRef): Promise<LoggedMessage> {
  const found =
    'number' in ref ? await store.messages.get(endpointId, ref.number) : await store.messages.find(endpointId, ref.platform, ref.id);
  if (!found) throw refinedProblem('no-such-message', noSuchMessageDetail(ref));
  return found;
}
