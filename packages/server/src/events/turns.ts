// Turns of the event loop for the streams' work. Two kinds of work queue here:
//
// - Reads of the log (`run`): a read and the writing of what it returned take a few milliseconds for
//   the largest records (SQLite reads synchronously; PostgreSQL spends its own CPU on each read), and
//   every stream whose client took an event asks for the next read at about the same time: run
//   together, twenty such reads would hold the event loop (or the machine's cores) for a hundred
//   milliseconds. They go one at a time, one starting per turn of the event loop, so requests and
//   other I/O are served between any two.
// - Looks at the store (`wait`): a stream woken by a change reads its endpoint's row and, when it
//   lacks only that version, writes the row as the event: tens of microseconds, no log read. A live
//   change wakes thousands of these a second, more than one turn each could carry, so up to
//   LOOKS_PER_TURN of them start in one turn, beside the turn's read. Their row reads then go
//   together (PostgreSQL reads a turn's rows in one query).

/** Looks started in one turn of the event loop, at most. */
export const LOOKS_PER_TURN = 64;

export class TurnQueue {
  private readonly reads: (() => void)[] = [];
  private readonly looks: (() => void)[] = [];
  private scheduled = false;
  private reading = false;

  /** Runs `work` (a read of the log) in its turn: on a later turn of the event loop, after the reads queued before it have settled. */
  async run<T>(work: () => Promise<T> | T): Promise<T> {
    await new Promise<void>((resolve) => {
      this.reads.push(resolve);
      this.schedule();
    });
    try {
      return await work();
    } finally {
      this.reading = false;
      this.schedule();
    }
  }

  /** Resolves in a later turn of the event loop, in order with the looks queued, whatever reads run. */
  wait(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.looks.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || (this.looks.length === 0 && (this.reading || this.reads.length === 0))) return;
    this.scheduled = true;
    // An immediate queued while immediates run waits for the next turn: I/O is polled in between.
    setImmediate(() => {
      this.scheduled = false;
      for (const look of this.looks.splice(0, LOOKS_PER_TURN)) look();
      if (!this.reading) {
        const read = this.reads.shift();
        if (read) {
          this.reading = true;
          read();
        }
      }
      this.schedule();
    });
  }
}
