// The SQLite store's group commit: the updates queued during one event-loop turn (and the relay's
// acknowledged deliveries, which are writes of their endpoint too) run in one transaction and are all
// acknowledged after its single COMMIT. It buys throughput: one fsync covers
// the batch (an fsync per update would bound updates per second), and nothing is acknowledged before
// it is durable.
import type { GroupCommitTiming } from '../port.ts';
import { isLockedByOther, type SqliteDatabase } from './database.ts';
import type { RowWrites, Written } from './rowWrites.ts';

/** What one update of a group commit came to: its write step's result, or what it threw. */
type Outcome = { ok: true; value: Written<unknown> } | { ok: false; error: unknown };

interface QueuedUpdate {
  /** When it was queued (performance.now()): a batch waiting for the write lock gives up lockWaitMs after. */
  since: number;
  id: string;
  run: () => Written<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit {
  private readonly database: SqliteDatabase;
  private readonly writes: RowWrites;
  private readonly lockWaitMs: number;
  /** Updates waiting for the next group commit. */
  private readonly queued: QueuedUpdate[] = [];
  private readonly listeners: ((commit: GroupCommitTiming) => void)[] = [];
  /** A retry of the queued batch is scheduled: another process held the write lock. */
  private lockRetry: { timer: NodeJS.Timeout; delayMs: number } | undefined;

  constructor(database: SqliteDatabase, writes: RowWrites, lockWaitMs: number) {
    this.database = database;
    this.writes = writes;
    this.lockWaitMs = lockWaitMs;
  }

  /** Queues `run` (a read-decide-write of endpoint `id`) for this turn's commit; resolves once committed. */
  add<T>(id: string, run: () => Written<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.queued.length === 0) setImmediate(() => this.commit());
      this.queued.push({ since: performance.now(), id, run, resolve: resolve as (v: unknown) => void, reject });
    });
  }

  observe(listener: (commit: GroupCommitTiming) => void): void {
    this.listeners.push(listener);
  }

  /** Commits what is queued now (close(): updates already accepted are committed, not dropped). */
  commit(): void {
    const lastDelayMs = this.lockRetry?.delayMs;
    if (this.lockRetry) {
      clearTimeout(this.lockRetry.timer);
      this.lockRetry = undefined;
    }
    const batch = this.queued.splice(0);
    if (batch.length === 0) return;
    const fail = (error: unknown) => {
      for (const item of batch) item.reject(error);
    };
    if (!this.database.isOpen) return fail(new Error('the store is closed'));
    let outcomes: Outcome[];
    const started = performance.now();
    let committing = started;
    try {
      outcomes = this.runBatch(batch);
      committing = performance.now();
      this.database.commit();
    } catch (error) {
      this.database.rollback();
      if (isLockedByOther(error) && started - batch[0]!.since < this.lockWaitMs) return this.retryWhenUnlocked(batch, lastDelayMs);
      return fail(error);
    }
    const timing = { updates: batch.length, statementsMs: committing - started, commitMs: performance.now() - committing };
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(this.writes.committed(item.id, outcome.value));
      else item.reject(outcome.error);
    });
    // After the batch is settled, so that a listener can delay no acknowledgement.
    for (const listener of this.listeners) listener(timing);
  }

  /**
   * Another process holds the write lock: the batch goes back to the front of the queue (updates
   * queued meanwhile join it) and is tried again on a timer, 2 ms later and doubling up to 50 ms,
   * so the event loop serves everything else while it waits.
   */
  private retryWhenUnlocked(batch: QueuedUpdate[], lastDelayMs = 1): void {
    this.queued.unshift(...batch);
    const delayMs = Math.min(50, lastDelayMs * 2);
    this.lockRetry = { timer: setTimeout(() => this.commit(), delayMs), delayMs };
  }

  /**
   * Runs a batch's updates inside a new transaction, in order, each seeing the ones before it. First
   * all together: updates almost never throw, and a SAVEPOINT and RELEASE around each cost ~2.5% of
   * an update. If one throws, that attempt is rolled back and the batch runs again with a savepoint
   * per update, so the one that throws is undone alone (decisions may run more than once: see
   * Endpoints.update). Leaves the transaction open for the caller's COMMIT.
   */
  private runBatch(batch: QueuedUpdate[]): Outcome[] {
    this.database.begin();
    try {
      return batch.map((item) => ({ ok: true, value: item.run() }));
    } catch {
      this.database.rollback();
    }
    this.database.begin();
    return batch.map((item) => this.database.savepoint(item.run));
  }
}
