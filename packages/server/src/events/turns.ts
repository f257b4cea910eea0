// Turns of the event loop for the streams' reads of the log. A read of the log and the writing of what
// it returned take a few milliseconds for the largest records (SQLite reads synchronously), and every
// stream's client that took an event asks for the next read at about the same time: run together,
// twenty such reads would hold the event loop for a hundred milliseconds. Here they queue, and one runs
// per turn of the event loop, so requests and other I/O are served between any two of them.

export class TurnQueue {
  private readonly waiting: (() => void)[] = [];
  private scheduled = false;

  /** Waiters now. */
  get size(): number {
    return this.waiting.length;
  }

  /** Resolves on a later turn of the event loop: one waiter per turn, first come first served. */
  wait(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.waiting.length === 0) return;
    this.scheduled = true;
    // An immediate queued while immediates run waits for the next turn: I/O is polled in between.
    setImmediate(() => {
      this.scheduled = false;
      this.waiting.shift()?.();
      this.schedule();
    });
  }
}
