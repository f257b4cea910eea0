// The rows both SQL adapters read for exportRows (same column names in SQLite and PostgreSQL) and
// their mapping to the port's EndpointSnapshot. An endpoint's pending deliveries come with it as one
// JSON array column, so a page is one statement: one snapshot of each endpoint and its outbox.
import { parseQueue, queueJson } from '../../domain/messageQueue.ts';
import type { Platform } from '../../domain/record.ts';
import type { LoggedMessage } from '../messageLog.ts';
import { type EndpointSnapshot, SNAPSHOT_PAGE_ROWS, type SnapshotDelivery } from '../snapshot.ts';
import type { EndpointRow } from './rows.ts';

export interface SnapshotRow extends EndpointRow {
  id: string;
  /** JSON array of the endpoint's outbox entries (messageSeq, platform, url, payload, attempts, nextAttemptAt, expiresAt), by outbox ID. */
  deliveries: string;
  /** JSON array of the endpoint's logged messages (LoggedMessage members), by number. */
  messages: string;
}

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
  deliveries: (JSON.parse(r.deliveries) as SnapshotDelivery[]).map((d) => ({
    ...d,
    messageSeq: Number(d.messageSeq),
    platform: d.platform as Platform,
  })),
  messages: (JSON.parse(r.messages) as LoggedMessage[]).map((m) => ({ ...m, number: Number(m.number), createdAt: Number(m.createdAt) })),
});

/** Staged rows of an import, a batch at a time: one array per column (PostgreSQL's unnest takes them so). */
export function snapshotColumns(rows: EndpointSnapshot[]) {
  const deliveries = rows.flatMap((r) => r.deliveries.map((d) => ({ id: r.id, seq: d.messageSeq, d })));
  const messages = rows.flatMap((r) => r.messages.map((m) => ({ id: r.id, m })));
  return {
    endpoints: {
      id: rows.map((r) => r.id),
      tokenHash: rows.map((r) => Buffer.from(r.tokenHash)),
      record: rows.map((r) => r.recordJson),
      seq: rows.map((r) => r.state.seq),
      pendingSince: rows.map((r) => r.state.pendingSince),
      version: rows.map((r) => r.version),
      queue: rows.map((r) => queueJson(r.state.queue)),
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
    },
    deliveries: {
      endpointId: deliveries.map((x) => x.id),
      seq: deliveries.map((x) => x.seq),
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
