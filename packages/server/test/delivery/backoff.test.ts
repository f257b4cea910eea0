import { describe, expect, it } from 'vitest';
import { BACKOFF, nextAttemptDelay } from '../../src/delivery/backoff.ts';

const almostOne = () => 0.999_999;

describe('nextAttemptDelay', () => {
  it('when random is 0, then the delay is 0 (full jitter)', () => {
    expect(nextAttemptDelay(1, undefined, () => 0)).toBe(0);
    expect(nextAttemptDelay(10, undefined, () => 0)).toBe(0);
  });

  it('when random is near 1, then the ceiling doubles per attempt from 250 ms', () => {
    expect([1, 2, 3, 4, 5].map((n) => nextAttemptDelay(n, undefined, almostOne))).toEqual([249, 499, 999, 1999, 3999]);
  });

  it('when random is 0.5, then the delay is half the ceiling', () => {
    expect(nextAttemptDelay(3, undefined, () => 0.5)).toBe(500);
  });

  it('when attempts are many, then the ceiling stays at 30 s (no overflow)', () => {
    expect(nextAttemptDelay(8, undefined, almostOne)).toBe(BACKOFF.capMs - 1);
    expect(nextAttemptDelay(5000, undefined, almostOne)).toBe(BACKOFF.capMs - 1);
  });

  it('when the server gave Retry-After, then the delay is at least that', () => {
    expect(nextAttemptDelay(1, 2000, () => 0)).toBe(2000);
    expect(nextAttemptDelay(1, 1500.2, almostOne)).toBe(1501);
  });

  it('when the jittered delay is longer than Retry-After, then the jittered delay wins', () => {
    expect(nextAttemptDelay(10, 1000, () => 0.5)).toBe(15_000);
  });

  it('when Retry-After is huge, then it is capped at 5 minutes', () => {
    expect(nextAttemptDelay(1, 86_400_000, () => 0)).toBe(BACKOFF.maxRetryAfterMs);
  });

  it('when Retry-After is zero, negative or not finite, then it is ignored', () => {
    for (const bad of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) expect(nextAttemptDelay(2, bad, () => 0.5)).toBe(250);
  });

  it('when attempt is below 1 or not an integer, then a RangeError is thrown', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => nextAttemptDelay(bad)).toThrow(RangeError);
  });

  it('when random is not injected, then the delay stays within [0, ceiling)', () => {
    for (let i = 0; i < 200; i++) {
      const d = nextAttemptDelay(4);
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThan(2000);
    }
  });
});
