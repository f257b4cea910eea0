// Counters in this process's memory (rate-limiter-flexible's memory limiter): the SQLite store's,
// since one server serves a file, and PostgreSQL's fallback while its database does not answer.
import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { Counters, WindowLimit, WindowLimiter } from './counters.ts';

export const memoryLimiter = (limit: WindowLimit): WindowLimiter => new RateLimiterMemory(limit);

export const memoryCounters: Counters = { limiter: memoryLimiter };
