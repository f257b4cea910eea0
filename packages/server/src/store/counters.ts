// The counters aggregate: fixed-window counters for the rate limits (http/rateLimits.ts). Answers are
// rate-limiter-flexible's RateLimiterRes, as its limiters give them. Where the counters live is the
// adapter's matter: in this process for SQLite (one server per file), in the shared database for
// PostgreSQL (so a limit holds across instances).
import type { RateLimiterRes } from 'rate-limiter-flexible';

/** A window limit's counter: one point per call. */
export interface WindowLimiter {
  /** Resolves while the key's window holds at most the limit's points; rejects with a RateLimiterRes past it. */
  consume(key: string): Promise<RateLimiterRes>;
}

export interface WindowLimit {
  /** Keys of this limit are counted as `keyPrefix:key`. */
  keyPrefix: string;
  /** Points a key may consume per window. */
  points: number;
  /** The window, in seconds. */
  duration: number;
}

export interface Counters {
  /** Counts points against `limit`; its counters start when first used. */
  limiter(limit: WindowLimit): WindowLimiter;
}
