// Turns for the streams' reads of the log. A read of the log and the writing of what it returned take a
// few milliseconds for the largest records (SQLite reads synchronously; PostgreSQL spends its own CPU
// on each read), and every stream whose client took an event asks for the next read at about the
// same time: run together, twenty such reads would hold the event loop (or the machine's cores) for a
// hundred milliseconds. Here they queue: one starts per turn of the event loop, so requests and other
// I/O are served between any two, and one runs at a time.

export class TurnQueue {
  private readonly waiting: (() => void)[] = [];
  private scheduled = false;
  private running = false;

  /** Waiters now. */
  get size(): number {
    return this.waiting.length;
  }

  /** Runs `work` in its turn: on a later turn of the event loop, after the work queued before it has settled. */
  async run<T>(work: () => Promise<T> | T): Promise<T> {
    await new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
    try {
      return await work();
    } finally {
      this.running = false;
      this.schedule();
    }
  }

  /** Resolves in a later turn of the event loop, in order with the work queued. */
  wait(): Promise<void> {
    return this.run(() => undefined);
  }

  private schedule(): void {
    if (this.scheduled || this.running || this.waiting.length === 0) return;
    this.scheduled = true;
    // An immediate queued while immediates run waits for the next turn: I/O is polled in between.
    setImmediate(() => {
      this.scheduled = false;
      const next = this.waiting.shift();
      if (!next) return;
      this.running = true;
      next();
    });
  }
}
