// The process-wide budget of slow streams, without sockets: which streams it ends, and when.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SLOW_GRACE_MS, type SlowStream, SlowStreamBudget } from '../../src/events/slowStreams.ts';

/** A stream holding `bytes`; records whether it was ended. */
function stream(bytes: number) {
  const s = { bytes, evicted: false } as SlowStream & { bytes: number; evicted: boolean };
  s.held = () => s.bytes;
  s.evict = () => void (s.evicted = true);
  return s;
}

describe('SlowStreamBudget', () => {
  afterEach(() => vi.useRealTimers());

  it('when slow streams stay within the budget, then none is ended, and one that resumes stops counting', () => {
    const budget = new SlowStreamBudget(100);
    const [a, b] = [stream(60), stream(40)];
    budget.waiting(a);
    budget.waiting(b);
    expect(budget.heldBytes).toBe(100);
    budget.resumed(a);
    expect(budget.heldBytes).toBe(40);
    budget.waiting(stream(60));
    expect([a.evicted, b.evicted]).toEqual([false, false]);
  });

  it('when a stream takes the total past the budget, then the streams holding the most are ended until the rest fit', () => {
    const budget = new SlowStreamBudget(100);
    const streams = [stream(30), stream(50), stream(20), stream(45)];
    for (const s of streams) budget.waiting(s);
    expect(streams.map((s) => s.evicted)).toEqual([false, true, false, false]);
    expect(budget.heldBytes).toBe(95);
    expect(budget.evicted).toBe(1);
  });

  it('when what the streams hold has shrunk since they began to wait, then they are measured again before any is ended', () => {
    const budget = new SlowStreamBudget(100);
    const a = stream(90);
    budget.waiting(a);
    a.bytes = 10; // its client took most of it
    const b = stream(80);
    budget.waiting(b);
    expect([a.evicted, b.evicted]).toEqual([false, false]);
    expect(budget.heldBytes).toBe(90);
  });

  it('when streams that have waited a second and streams that just began are over the budget, then the ones that waited go first', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const budget = new SlowStreamBudget(100);
    const stalled = [stream(30), stream(30)];
    for (const s of stalled) budget.waiting(s);
    vi.advanceTimersByTime(SLOW_GRACE_MS);
    const fresh = stream(60); // holds the most, but was handed its data just now
    budget.waiting(fresh);
    expect(stalled.map((s) => s.evicted)).toEqual([true, false]);
    expect(fresh.evicted).toBe(false);
    expect(budget.heldBytes).toBe(90);
  });
});
