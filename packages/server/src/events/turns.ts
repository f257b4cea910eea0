// Turns for the streams' reads of the log. A read of the log and the writing of what it returned take a
// few milliseconds for the largest records (SQLite reads synchronously; PostgreSQL spends its own CPU
// on each read), and every stream whose client took an event asks for the next read at about the
// same time: run together, twenty such reads would hold the event loop (or the machine's cores) for a
// hundred milliseconds. Here they queue and start in turns of the event loop: a turn starts queued
// work while it has spent less than `sliceMs` of the loop's time, then yields, so requests and other
// I/O are served between two turns whatever the number of streams, and thousands of small reads (a
// live event each) do not each wait for a turn of their own.
//
// `concurrency` bounds the work in flight at once. Work that runs on the event loop (SQLite's reads)
// goes one at a time. A read that crosses the network (PostgreSQL) spends most of its time waiting for
// the database's answer: one at a time would allow one read per round trip, so a few overlap.

export interface TurnQueueOptions {
  /** Work in flight at once (default 1). */
  concurrency?: number;
  /** Loop time a turn may spend starting queued work before it yields (default TURN_SLICE_MS). */
  sliceMs?: number;
}

/**
 * Milliseconds of a turn of the event loop spent on queued work (and what its callers do with the
 * results before they ask again) before the rest waits for the next turn: a small live event takes
 * tens of microseconds, the largest record's read a few milliseconds.
 */
export const TURN_SLICE_MS = 1;

/** Reads of the log in flight at once for a store whose reads cross the network (PostgreSQL). */
export const NETWORK_READS_IN_FLIGHT = 2;

export class TurnQueue {
  readonly concurrency: number;
  readonly sliceMs: number;
  private readonly waiting: (() => void)[] = [];
  private scheduled = false;
  private running = 0;
  /** performance.now() until which the current turn may start more work. */
  private sliceEnds = 0;

  constructor(options: TurnQueueOptions = {}) {
    this.concurrency = Math.max(1, options.concurrency ?? 1);
    this.sliceMs = options.sliceMs ?? TURN_SLICE_MS;
  }

  /** Waiters now. */
  get size(): number {
    return this.waiting.length;
  }

  /**
   * Runs `work` in its turn: in order with the work queued before it, once fewer than `concurrency`
   * queued works run (one: after the work before it has settled), and within a turn's slice: never
   * within the call's own synchronous code, and on a later turn of the event loop unless the current
   * turn's slice is still running.
   */
  async run<T>(work: () => Promise<T> | T): Promise<T> {
    await new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
    try {
      return await work();
    } finally {
      this.running--;
      // Within the turn's slice the next starts at once; past it, in the next turn.
      if (performance.now() < this.sliceEnds) this.start();
      else this.schedule();
    }
  }

  /** Resolves in its turn (as `run`), in order with the work queued. */
  wait(): Promise<void> {
    return this.run(() => undefined);
  }

  private start(): void {
    while (this.running < this.concurrency) {
      const next = this.waiting.shift();
      if (!next) return;
      this.running++;
      next();
    }
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.concurrency || this.waiting.length === 0) return;
    this.scheduled = true;
    // An immediate queued while immediates run waits for the next turn: I/O is polled in between.
    setImmediate(() => {
      this.scheduled = false;
      this.sliceEnds = performance.now() + this.sliceMs;
      this.start();
    });
  }
}
