// The SQLite adapter's writer thread. The main thread decides each update (reads, update rules,
// authentication) and sends the decided writes here, a batch per event-loop turn; this thread runs
// the statements and the COMMIT with its fsync on its own connection, and answers once a batch is
// durable. The main thread meanwhile goes on serving requests and deciding the next batches on top
// of the rows it has sent (pipelining): the profile had the write statements and the COMMIT at over
// half of an update's time on the event loop, and a main thread waiting for each batch before
// deciding the next left both threads idle a third of the time.
//
// Batches that queue up while a transaction runs are committed together in the next one (one fsync).
// Every write is conditional on the row being the one it was decided on (version and token digest):
// a row changed in between by another process is reported as a conflict, and the main thread decides
// that update again. So is an update decided on top of a write that did not commit: an endpoint whose
// write failed in batch B is "broken" for every batch the main thread decided before it learned of B.
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { RowWriteStatements, openConnection, type RowWrite } from './sqliteWrites.ts';

export interface WriterSettings {
  /** Marks a writer thread (modules importing this one may run in other worker threads). */
  role: 'chatbridge-sqlite-writer';
  path: string;
  maxEvents: number;
}

/** One item per queued update, in order. An item without `write` decided to write nothing. */
export interface BatchItem {
  id: string;
  write?: RowWrite;
}

export interface Batch {
  /** Numbered from 1 by the main thread, in sending order. */
  seq: number;
  /** The last batch whose result the main thread had seen when it decided this one. */
  basedOn: number;
  items: BatchItem[];
  /** Epoch ms for the events' timestamps (the main thread's clock, which tests control). */
  now: number;
}

/** What a failed statement or transaction was, as far as callers and the 503 mapping look. */
export interface SerializedError {
  message: string;
  code?: string;
  errcode?: number;
  errstr?: string;
}

/**
 * ok: committed (or nothing to write). conflict: the row changed since the decision, or an earlier
 * item of the same endpoint in this batch did not commit, so this one's decision rests on a row that
 * never existed: nothing written. error: the item's statements failed and were undone alone.
 */
export type ItemOutcome = { kind: 'ok' } | { kind: 'conflict' } | { kind: 'error'; error: SerializedError };

export type BatchResult =
  /** `before` and `after`: the commit clock before the batch's first write and after its last. */
  | { seq: number; ok: true; before: number; after: number; outcomes: ItemOutcome[] }
  /** BEGIN or COMMIT failed: nothing of the batch was written. */
  | { seq: number; ok: false; error: SerializedError };

export function serializeError(error: unknown): SerializedError {
  const e = error as { message?: unknown; code?: unknown; errcode?: unknown; errstr?: unknown };
  return {
    message: typeof e?.message === 'string' ? e.message : String(error),
    ...(typeof e?.code === 'string' && { code: e.code }),
    ...(typeof e?.errcode === 'number' && { errcode: e.errcode }),
    ...(typeof e?.errstr === 'string' && { errstr: e.errstr }),
  };
}

export function deserializeError(s: SerializedError): Error {
  return Object.assign(new Error(s.message), s);
}

function startWriter(port: NonNullable<typeof parentPort>, settings: WriterSettings): void {
  const db = openConnection(settings.path);
  const writes = new RowWriteStatements(db, settings.maxEvents);
  const q = (sql: string) => db.prepare(sql);
  const tx = { begin: q('BEGIN IMMEDIATE'), commit: q('COMMIT'), savepoint: q('SAVEPOINT item'), release: q('RELEASE item'), rollbackTo: q('ROLLBACK TO item') };
  /** Endpoint -> the latest batch in which a write of it did not commit. */
  const brokenAt = new Map<string, number>();
  const breaks = (id: string, seq: number) => brokenAt.set(id, seq);

  /** One batch inside the open transaction. */
  const runBatch = ({ seq, basedOn, items, now }: Batch): BatchResult => {
    for (const [id, at] of brokenAt) if (at <= basedOn) brokenAt.delete(id); // the main thread knows
    const before = writes.clock();
    const outcomes = items.map(({ id, write }): ItemOutcome => {
      if ((brokenAt.get(id) ?? 0) > basedOn) return { kind: 'conflict' }; // decided on a write that failed
      if (!write) return { kind: 'ok' };
      tx.savepoint.run();
      try {
        const version = writes.apply(id, write, now);
        tx.release.run();
        if (version !== undefined) return { kind: 'ok' };
        breaks(id, seq);
        return { kind: 'conflict' };
      } catch (error) {
        tx.rollbackTo.run();
        tx.release.run();
        breaks(id, seq);
        return { kind: 'error', error: serializeError(error) };
      }
    });
    return { seq, ok: true, before, after: writes.clock(), outcomes };
  };

  /** Every batch waiting, in one transaction: one fsync for all. */
  const commit = (batches: Batch[]): BatchResult[] => {
    try {
      tx.begin.run();
      const results = batches.map(runBatch);
      tx.commit.run();
      return results;
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      for (const batch of batches) for (const item of batch.items) breaks(item.id, batch.seq);
      return batches.map((batch) => ({ seq: batch.seq, ok: false, error: serializeError(error) }));
    }
  };

  port.on('message', (first: Batch) => {
    const batches = [first];
    for (let next = receiveMessageOnPort(port); next; next = receiveMessageOnPort(port)) batches.push(next.message as Batch);
    for (const result of commit(batches)) port.postMessage(result);
  });
}

const settings = workerData as WriterSettings | undefined;
if (parentPort && settings?.role === 'chatbridge-sqlite-writer') startWriter(parentPort, settings);
