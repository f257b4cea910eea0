// An endpoint whose message log holds what issue 44 adds, written through the store's port as the
// handlers and the relay write it: a message with IDs on three platforms, edited once; a native reply
// to it, deleted; and the webhook calls that edit and delete their chat_a copies, still queued while
// nothing is unread. Export/import tests move it between stores and compare.
import { emptyMessage } from '../../src/domain/record.ts';
import type { EndpointStore } from '../../src/store/port.ts';

export const CONVERSATION_HOOK = 'https://chat-a.example.com/api/webhooks/44/secret-of-the-webhook-0000';
export const EDITED_CONTENT = '{"content":"hi, edited"}';
const DELETED = JSON.stringify(emptyMessage());

/** What the log keeps of the conversation once arranged (LoggedMessage members). */
export const CONVERSATION_LOG = [
  {
    number: 1,
    sender: 'chat_c' as const,
    senderChannel: 'c-channel-1',
    message: EDITED_CONTENT,
    unread: 0,
    expired: 0,
    createdAt: 60_000,
    ids: { chat_a: 'a-1', chat_c: 'c-1', chat_d: 'd-1' },
    replyTo: null,
    edits: 1,
    editedAt: 70_000,
    deletedAt: null,
  },
  {
    number: 2,
    sender: 'chat_c' as const,
    senderChannel: 'c-channel-1',
    message: DELETED,
    unread: 0,
    expired: 0,
    createdAt: 61_000,
    ids: { chat_c: 'c-2' },
    replyTo: 1,
    edits: 0,
    editedAt: null,
    deletedAt: 71_000,
  },
];

/** The outbox once arranged: the edit of message 1's chat_a copy, then the delete of message 2's (SnapshotDelivery members). */
export const CONVERSATION_OUTBOX = [
  {
    messageSeq: 1,
    kind: 'edit' as const,
    platform: 'chat_a' as const,
    url: CONVERSATION_HOOK,
    payload: EDITED_CONTENT,
    attempts: 0,
    nextAttemptAt: 0,
    expiresAt: 4_000_000_000_000,
  },
  {
    messageSeq: 2,
    kind: 'delete' as const,
    platform: 'chat_a' as const,
    url: CONVERSATION_HOOK,
    payload: '',
    attempts: 0,
    nextAttemptAt: 0,
    expiresAt: 4_000_000_000_000,
  },
];

/**
 * Writes the conversation to endpoint `id` (which exists, idle, with no message yet): five versions,
 * the last a delete. chat_a is a webhook platform of the endpoint (`self-user`, CONVERSATION_HOOK).
 */
export async function arrangeConversation(store: EndpointStore, id: string): Promise<void> {
  const expiresAt = 4_000_000_000_000;
  const create = (number: number) => ({
    number,
    platform: 'chat_a' as const,
    url: CONVERSATION_HOOK,
    payload: '{"content":"hi"}',
    expiresAt,
  });
  const message = { sender: 'chat_c' as const, senderChannel: 'c-channel-1', message: '{"content":"hi"}', unread: 3 };
  // Message 1 from chat_c, with its sender's ID; chat_a and chat_b have it to read.
  await store.endpoints.update(id, (cur) => {
    const record = structuredClone(cur!.record);
    record.config['self-user'] = true;
    record.config.webhooks.chat_a = [CONVERSATION_HOOK];
    return {
      write: {
        record,
        state: { seq: 1, pendingSince: 60_000, queue: [{ n: 1, u: 3, at: 60_000, b: 16, s: 'chat_c' }] },
        deliveries: [create(1)],
        messages: { append: { number: 1, ...message, createdAt: 60_000 }, ids: [{ number: 1, platform: 'chat_c', id: 'c-1' }] },
      },
      result: undefined,
    };
  });
  // Message 2 natively replies to message 1.
  await store.endpoints.update(id, (cur) => ({
    write: {
      record: cur!.record,
      state: { seq: 2, pendingSince: 60_000, queue: [...cur!.state.queue, { n: 2, u: 3, at: 61_000, b: 16, s: 'chat_c' }] },
      deliveries: [create(2)],
      messages: {
        append: { number: 2, ...message, createdAt: 61_000, replyTo: 1 },
        ids: [{ number: 2, platform: 'chat_c', id: 'c-2' }],
      },
    },
    result: undefined,
  }));
  // Message 1 reaches chat_a (its webhook answered with the copy's ID) and chat_b; chat_d's bot reports its copy's ID.
  await store.endpoints.update(id, (cur) => ({
    write: {
      record: cur!.record,
      state: { seq: 2, pendingSince: 61_000, queue: cur!.state.queue.filter((q) => q.n !== 1) },
      messages: {
        settle: [{ number: 1, unread: 0, expired: 0 }],
        ids: [
          { number: 1, platform: 'chat_a', id: 'a-1' },
          { number: 1, platform: 'chat_d', id: 'd-1' },
        ],
      },
    },
    result: undefined,
  }));
  // Message 1 is edited: its chat_a copy is to be edited.
  await store.endpoints.update(id, (cur) => ({
    write: {
      record: cur!.record,
      state: cur!.state,
      deliveries: [{ kind: 'edit', number: 1, platform: 'chat_a', url: CONVERSATION_HOOK, payload: EDITED_CONTENT, expiresAt }],
      messages: { rewrite: { number: 1, message: EDITED_CONTENT, at: 70_000, deleted: false } },
      event: { kind: 'edit', json: JSON.stringify({ number: 1, message: JSON.parse(EDITED_CONTENT), edits: 1 }) },
    },
    result: undefined,
  }));
  // Message 2 is deleted before anyone read it: nothing is unread any more (its create is dropped),
  // and a delete of its chat_a copy is queued behind the edit.
  await store.endpoints.update(id, (cur) => ({
    write: {
      record: cur!.record,
      state: { seq: 2, pendingSince: null, queue: [] },
      deliveries: [{ kind: 'delete', number: 2, platform: 'chat_a', url: CONVERSATION_HOOK, payload: '', expiresAt }],
      messages: { settle: [{ number: 2, unread: 0, expired: 0 }], rewrite: { number: 2, message: DELETED, at: 71_000, deleted: true } },
      event: { kind: 'delete', json: JSON.stringify({ number: 2, deleted_at: 71_000 }) },
    },
    result: undefined,
  }));
}
