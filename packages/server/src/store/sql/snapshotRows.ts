// The rows both SQL adapters read for exportRows (same column names in SQLite and PostgreSQL) and
// their mapping to the port's EndpointSnapshot. An endpoint's outbox entries and message log (each
// message with its copies' IDs) come with it as JSON array columns, so a page is one statement: one
// snapshot of each endpoint, its outbox and its log.
import type { MessageIds } from '../../domain/messageIds.ts';
import { parseQueue, queueJson } from '../../domain/messageQueue.ts';
import { PLATFORMS, type Platform } from '../../domain/record.ts';
import type { ChangeKind, CopyCall } from '../../domain/row.ts';
import type { LoggedMessage } from '../messageLog.ts';
import { type EndpointSnapshot, SNAPSHOT_PAGE_ROWS, type SnapshotDelivery } from '../snapshot.ts';
import type { EndpointRow } from './rows.ts';

export interface SnapshotRow extends EndpointRow {
  id: string;
  /** JSON array of the endpoint's outbox entries (SnapshotDelivery members), by outbox ID. */
  deliveries: string;
  /** JSON array of the endpoint's logged messages (LoggedMessage members, `ids` an object by platform), by number. */
  messages: string;
}

/** A number column as JSON gives it (PostgreSQL's bigint may come as text). */
type Num = number | string;
type DeliveryJson = Omit<SnapshotDelivery, 'messageSeq' | 'nextAttemptAt' | 'expiresAt'> & {
  messageSeq: Num;
  nextAttemptAt: Num;
  expiresAt: Num;
};
type MessageJson = Omit<LoggedMessage, 'number' | 'createdAt' | 'replyTo' | 'editedAt' | 'deletedAt' | 'ids'> & {
  number: Num;
  createdAt: Num;
  replyTo: Num | null;
  editedAt: Num | null;
  deletedAt: Num | null;
  ids: Record<string, string> | null;
};

const orNull = (v: Num | null) => (v === null ? null : Number(v));

/** The IDs in platform order, whatever order the store's JSON aggregate gave them in, so both stores export the same text. */
function orderedIds(ids: Record<string, string> | null): MessageIds {
  const ordered: MessageIds = {};
  for (const p of PLATFORMS) if (ids?.[p] !== undefined) ordered[p] = ids[p];
  return ordered;
}

// Members are listed one by one: their order is the order of the export line's keys, the same from both stores.
const toDelivery = (d: DeliveryJson): SnapshotDelivery => ({
  messageSeq: Number(d.messageSeq),
  kind: d.kind as CopyCall,
  platform: d.platform as Platform,
  url: d.url,
  payload: d.payload,
  attempts: d.attempts,
  nextAttemptAt: Number(d.nextAttemptAt),
  expiresAt: Number(d.expiresAt),
});

const toMessage = (m: MessageJson): LoggedMessage => ({
  number: Number(m.number),
  sender: m.sender,
  senderChannel: m.senderChannel,
  message: m.message,
  unread: m.unread,
  expired: m.expired,
  createdAt: Number(m.createdAt),
  ids: orderedIds(m.ids),
  replyTo: orNull(m.replyTo),
  edits: m.edits,
  editedAt: orNull(m.editedAt),
  deletedAt: orNull(m.deletedAt),
});

export const toSnapshot = (r: SnapshotRow): EndpointSnapshot => ({
  id: r.id,
  tokenHash: r.token_hash,
  recordJson: r.record,
  state: {
    seq: Number(r.message_seq),
    pendingSince: r.pending_since === null ? null : Number(r.pending_since),
    queue: parseQueue(r.queue),
  },
  version: Number(r.version),
  lastChange: (r.last_change as ChangeKind | undefined) ?? 'record',
  deliveries: (JSON.parse(r.deliveries) as DeliveryJson[]).map(toDelivery),
  messages: (JSON.parse(r.messages) as MessageJson[]).map(toMessage),
});

/** Staged rows of an import, a batch at a time: one array per column (PostgreSQL's unnest takes them so). */
export function snapshotColumns(rows: EndpointSnapshot[]) {
  const deliveries = rows.flatMap((r) => r.deliveries.map((d) => ({ id: r.id, seq: d.messageSeq, d })));
  const messages = rows.flatMap((r) => r.messages.map((m) => ({ id: r.id, m })));
  const ids = messages.flatMap(({ id, m }) =>
    PLATFORMS.flatMap((platform) => {
      const messageId = m.ids[platform];
      return messageId === undefined ? [] : [{ id, platform, messageId, number: m.number }];
    }),
  );
  return {
    endpoints: {
      id: rows.map((r) => r.id),
      tokenHash: rows.map((r) => Buffer.from(r.tokenHash)),
      record: rows.map((r) => r.recordJson),
      seq: rows.map((r) => r.state.seq),
      pendingSince: rows.map((r) => r.state.pendingSince),
      version: rows.map((r) => r.version),
      queue: rows.map((r) => queueJson(r.state.queue)),
      lastChange: rows.map((r) => r.lastChange),
    },
    messages: {
      endpointId: messages.map((x) => x.id),
      number: messages.map((x) => x.m.number),
      sender: messages.map((x) => x.m.sender),
      senderChannel: messages.map((x) => x.m.senderChannel),
      message: messages.map((x) => x.m.message),
      unread: messages.map((x) => x.m.unread),
      expired: messages.map((x) => x.m.expired),
      createdAt: messages.map((x) => x.m.createdAt),
      replyTo: messages.map((x) => x.m.replyTo),
      edits: messages.map((x) => x.m.edits),
      editedAt: messages.map((x) => x.m.editedAt),
      deletedAt: messages.map((x) => x.m.deletedAt),
    },
    messageIds: {
      endpointId: ids.map((x) => x.id),
      platform: ids.map((x) => x.platform),
      messageId: ids.map((x) => x.messageId),
      number: ids.map((x) => x.number),
    },
    deliveries: {
      endpointId: deliveries.map((x) => x.id),
      seq: deliveries.map((x) => x.seq),
      kind: deliveries.map((x) => x.d.kind),
      platform: deliveries.map((x) => x.d.platform),
      url: deliveries.map((x) => x.d.url),
      payload: deliveries.map((x) => x.d.payload),
      attempts: deliveries.map((x) => x.d.attempts),
      nextAttemptAt: deliveries.map((x) => x.d.nextAttemptAt),
      expiresAt: deliveries.map((x) => x.d.expiresAt),
    },
  };
}

/** Every endpoint's snapshot in ID order, read a page of SNAPSHOT_PAGE_ROWS at a time by `page` (the rows after an ID). */
export async function* snapshotPages(page: (after: string) => Promise<SnapshotRow[]> | SnapshotRow[]): AsyncIterable<EndpointSnapshot> {
  let after = '';
  for (;;) {
    const rows = await page(after);
    yield* rows.map(toSnapshot);
    if (rows.length < SNAPSHOT_PAGE_ROWS) return;
    after = rows[rows.length - 1]!.id;
  }
}

/** Collects an (async) iterable into batches of `size`. */
export async function* batchesOf<T>(items: AsyncIterable<T> | Iterable<T>, size: number): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const item of items) {
    batch.push(item);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
