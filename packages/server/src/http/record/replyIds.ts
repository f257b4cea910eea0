// A native reply names the copies of the message it answers as the log knows them when it is read
// (domain/messageIds.ts, currentReplyIds): a platform reads a reply after its target, so the ID of its
// own copy of the target is known by then even when it was not at the reply's acceptance.
import { currentReplyIds, nativeReplyTarget, type ReplyTarget } from '../../domain/messageIds.ts';
import type { Message } from '../../domain/record.ts';
import type { EndpointStore } from '../../store/port.ts';

/** `message` with its native reply's IDs as of `target` (unchanged for any other message). */
export function withReplyTarget(message: Message, target: ReplyTarget | undefined): Message {
  if (nativeReplyTarget(message) === undefined) return message;
  return { ...message, reply: { ...message.reply, ids: currentReplyIds(message.reply.ids, target) } };
}

/** `message` with its native reply's IDs as the log knows them now. */
export async function withCurrentReply(store: Pick<EndpointStore, 'messages'>, endpointId: string, message: Message): Promise<Message> {
  const target = nativeReplyTarget(message);
  if (target === undefined) return message;
  return withReplyTarget(message, await store.messages.get(endpointId, target));
}
