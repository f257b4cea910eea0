// The process-wide budget of slow event streams. A stream is slow while it waits for its client to take
// what was written (its socket's write() returned false); what it holds then (bytes queued in the
// process and not yet taken, plus events read and not yet written) stays in memory until the client
// reads. Each stream holds little (one read of the event log at most, see endpointStream.ts), but many slow
// streams together could still hold a lot: past the budget, the streams holding the most are ended
// (those waiting for a second or more first), which drops what they hold, and their clients resume
// with Last-Event-ID.
import type { Response } from 'express';
import type { Logger } from '../logger.ts';

/** A stream as the budget sees it. */
export interface SlowStream {
  /** Bytes the stream holds now: queued for its socket and not yet taken, plus read and not yet written. */
  held(): number;
  /** Ends the stream at once, dropping what it holds. */
  evict(): void;
}

/**
 * A stream that has waited less than this is ended for the budget only when ending every stream that
 * has waited longer is not enough: a client that reads has just been handed an event (a large record
 * is queued whole for a moment), one that has taken nothing for a second is the slower.
 */
export const SLOW_GRACE_MS = 1000;

interface Charge {
  bytes: number;
  /** When the stream began to wait (performance.now()). */
  since: number;
}

export class SlowStreamBudget {
  readonly maxBytes: number;
  /**
   * Each slow stream's bytes when it last became slow (or was last measured). A slow stream writes
   * nothing more until its client reads, so what it holds only shrinks: the sum is an upper bound,
   * kept without measuring every stream each time one becomes slow.
   */
  private readonly charged = new Map<SlowStream, Charge>();
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
    const now = performance.now();
    this.charged.set(stream, { bytes, since: now });
    this.total += bytes;
    if (this.total > this.maxBytes) this.enforce(now);
  }

  /** `stream` has nothing queued any more, or has ended. */
  resumed(stream: SlowStream): void {
    this.forget(stream);
  }

  private forget(stream: SlowStream): void {
    const charge = this.charged.get(stream);
    if (charge === undefined) return;
    this.charged.delete(stream);
    this.total -= charge.bytes;
  }

  /**
   * Measures every slow stream again; while they hold more than the budget, ends the one holding the
   * most, among those that have waited SLOW_GRACE_MS first.
   */
  private enforce(now: number): void {
    this.total = 0;
    for (const [stream, charge] of this.charged) {
      charge.bytes = stream.held();
      this.total += charge.bytes;
    }
    if (this.total <= this.maxBytes) return;
    const waitedLong = (c: Charge) => (now - c.since >= SLOW_GRACE_MS ? 0 : 1);
    const order = [...this.charged].sort(([, a], [, b]) => waitedLong(a) - waitedLong(b) || b.bytes - a.bytes);
    for (const [stream, charge] of order) {
      if (this.total <= this.maxBytes) break;
      this.charged.delete(stream);
      this.total -= charge.bytes;
      this.evicted++;
      stream.evict();
    }
  }
}

/**
 * A slow client's wait: resolves once what was written to `res` has gone out (or the stream ended).
 * Nothing more is queued for a socket whose write() returned false; meanwhile the stream counts
 * against the budget, and `stalled` is told when the wait began (undefined once it is over).
 */
export function waitForDrain(
  res: Response,
  budget: SlowStreamBudget,
  slow: SlowStream,
  ended: () => boolean,
  stalled: (since: number | undefined) => void,
): Promise<void> {
  if (!res.writableNeedDrain || ended()) return Promise.resolve();
  return new Promise<void>((resolve) => {
    stalled(Date.now());
    const done = () => {
      stalled(undefined);
      budget.resumed(slow);
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
    budget.waiting(slow); // may end this stream (and others) at once
  });
}

/**
 * A stream writing to `res` as the budget sees it: it holds what its socket has queued plus
 * `unsent()` (read and not yet written); evicted, it logs why (with `context`), drops its socket and
 * everything it holds, and `end`s.
 */
export function slowStreamOf(
  res: Response,
  budget: SlowStreamBudget,
  logger: Logger,
  context: Record<string, unknown>,
  end: () => void,
  unsent: () => number = () => 0,
): SlowStream {
  const held = () => res.writableLength + unsent();
  return {
    held,
    evict: () => {
      logger.warn(
        { ...context, heldBytes: held(), budgetBytes: budget.maxBytes },
        'event stream ended: the slow streams held more than their budget; its client resumes with Last-Event-ID',
      );
      res.destroy(); // what it holds is dropped with the socket
      end();
    },
  };
}
