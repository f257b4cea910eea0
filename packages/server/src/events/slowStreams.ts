// The process-wide budget of slow event streams. A stream is slow while it waits for its client to take
// what was written (its socket's write() returned false); what it holds then (bytes queued in the
// process and not yet taken, plus events read and not yet written) stays in memory until the client
// reads. Each stream holds little (one read of the event log at most, see session.ts), but many slow
// streams together could still hold a lot: past the budget, the streams holding the most are ended,
// which drops what they hold, and their clients resume with Last-Event-ID.

/** A stream as the budget sees it. */
export interface SlowStream {
  /** Bytes the stream holds now: queued for its socket and not yet taken, plus read and not yet written. */
  held(): number;
  /** Ends the stream at once, dropping what it holds. */
  evict(): void;
}

export class SlowStreamBudget {
  readonly maxBytes: number;
  /**
   * Each slow stream's bytes when it last became slow (or was last measured). A slow stream writes
   * nothing more until its client reads, so what it holds only shrinks: the sum is an upper bound,
   * kept without measuring every stream each time one becomes slow.
   */
  private readonly charged = new Map<SlowStream, number>();
  private total = 0;
  /** Streams ended for the budget since start (for metrics and tests). */
  evicted = 0;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Bytes the slow streams held when last measured (an upper bound of what they hold now). */
  get heldBytes(): number {
    return this.total;
  }

  /** Slow streams now. */
  get size(): number {
    return this.charged.size;
  }

  /** `stream` waits for its client: counted until `resumed`; ends the largest slow streams past the budget. */
  waiting(stream: SlowStream): void {
    this.forget(stream);
    const bytes = stream.held();
    this.charged.set(stream, bytes);
    this.total += bytes;
    if (this.total > this.maxBytes) this.enforce();
  }

  /** `stream` has nothing queued any more, or has ended. */
  resumed(stream: SlowStream): void {
    this.forget(stream);
  }

  private forget(stream: SlowStream): void {
    const bytes = this.charged.get(stream);
    if (bytes === undefined) return;
    this.charged.delete(stream);
    this.total -= bytes;
  }

  /** Measures every slow stream again; while they hold more than the budget, ends the one holding the most. */
  private enforce(): void {
    this.total = 0;
    for (const stream of this.charged.keys()) {
      const bytes = stream.held();
      this.charged.set(stream, bytes);
      this.total += bytes;
    }
    if (this.total <= this.maxBytes) return;
    const largestFirst = [...this.charged].sort((a, b) => b[1] - a[1]);
    for (const [stream, bytes] of largestFirst) {
      if (this.total <= this.maxBytes) break;
      this.charged.delete(stream);
      this.total -= bytes;
      this.evicted++;
      stream.evict();
    }
  }
}
