// When to try a failed delivery again. Pure: the randomness is injected.
//
// Decisions:
// - Exponential backoff with full jitter: after the n-th failed attempt (n = 1, 2, …) the delay is
//   uniform in [0, min(30 s, 250 ms × 2^(n-1))). Full jitter spreads the retries of many deliveries
//   that failed together (one receiver outage) instead of retrying them in lockstep.
// - A receiver's Retry-After (429, 503) is a floor: the delay is at least that long, but never more
//   than 5 minutes (a hostile or broken receiver cannot park a delivery for days); the jittered
//   delay still applies when it is longer.
// - How many attempts to make, and when to give up, is the caller's decision.

export const BACKOFF = {
  baseMs: 250,
  factor: 2,
  capMs: 30_000,
  maxRetryAfterMs: 5 * 60_000,
} as const;

/**
 * Milliseconds to wait before the next attempt, after `attempt` failed attempts (1 after the first
 * failure). `random` returns a number in [0, 1), like Math.random.
 */
export function nextAttemptDelay(attempt: number, retryAfterMs?: number, random: () => number = Math.random): number {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be an integer >= 1, got ${attempt}`);
  const ceiling = Math.min(BACKOFF.capMs, BACKOFF.baseMs * BACKOFF.factor ** (attempt - 1));
  const jittered = Math.floor(random() * ceiling);
  if (retryAfterMs === undefined || !Number.isFinite(retryAfterMs) || retryAfterMs <= 0) return jittered;
  return Math.max(jittered, Math.min(Math.ceil(retryAfterMs), BACKOFF.maxRetryAfterMs));
}
