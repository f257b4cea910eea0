// The SQLite adapter's writer thread. The main thread decides each update (reads, update rules,
// authentication) and sends the decided writes here, a batch per group commit; this thread runs the
// statements and the COMMIT with its fsync on its own connection, and answers once the batch is
// durable. The main thread meanwhile goes on serving requests: the profile had the write statements
// and the COMMIT at over half of an update's time on the event loop.
//
// Every write is conditional on the row being the one it was decided on (version and token digest):
// a row changed in between by another process is reported as a conflict, and the main thread decides
// that update again under the write lock.
import { parentPort, workerData } from 'node:worker_threads';
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
  /** `before` and `after`: the commit clock right after BEGIN and right before COMMIT. */
  | { ok: true; before: number; after: number; outcomes: ItemOutcome[] }
  /** BEGIN or COMMIT failed: nothing of the batch was written. */
  | { ok: false; error: SerializedError };

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
  const abandon = (error: unknown): BatchResult => {
    if (db.isTransaction) db.exec('ROLLBACK');
    return { ok: false, error: serializeError(error) };
  };

  const run = ({ items, now }: Batch): BatchResult => {
    try {
      tx.begin.run();
    } catch (error) {
      return abandon(error);
    }
    const before = writes.clock();
    const broken = new Set<string>(); // endpoints with an item that did not commit in this batch
    const outcomes = items.map(({ id, write }): ItemOutcome => {
      if (broken.has(id)) return { kind: 'conflict' };
      if (!write) return { kind: 'ok' };
      tx.savepoint.run();
      try {
        const version = writes.apply(id, write, now);
        tx.release.run();
        if (version !== undefined) return { kind: 'ok' };
        broken.add(id);
        return { kind: 'conflict' };
      } catch (error) {
        tx.rollbackTo.run();
        tx.release.run();
        broken.add(id);
        return { kind: 'error', error: serializeError(error) };
      }
    });
    const after = writes.clock();
    try {
      tx.commit.run();
    } catch (error) {
      return abandon(error);
    }
    return { ok: true, before, after, outcomes };
  };

  port.on('message', (batch: Batch) => port.postMessage(run(batch)));
}

const settings = workerData as WriterSettings | undefined;
if (parentPort && settings?.role === 'chatbridge-sqlite-writer') startWriter(parentPort, settings);
