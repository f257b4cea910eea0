// Abuse limits (rate-limiter-flexible): failed authentications per client address, and requests per
// endpoint with a burst allowance. On one box the counters live in memory; on PostgreSQL they live in
// the shared database, so the limits hold across instances. Each limit is off when set to 0.
import type { Request, RequestHandler, Response } from 'express';
import pg from 'pg';
import {
  BurstyRateLimiter,
  RateLimiterMemory,
  RateLimiterRes,
  type RateLimiterAbstract,
  type IRateLimiterOptions,
} from 'rate-limiter-flexible';
import type { Logger } from '../logger.ts';
import { openapiOf } from './operations.ts';
import { BatchedRateLimiterPostgres } from './batchedPostgresLimiter.ts';
import { HttpProblem } from './problem.ts';
import { hashToken } from '../tokens.ts';
import { presentedTokenDigest } from './presentedToken.ts';
import type { CompletionObserver } from './requestLog.ts';

/** Requests without a token share one bucket per endpoint (the validator rejects them anyway). */
const NO_TOKEN = hashToken('');

export interface RateLimitSettings {
  /** Failed authentications a client address may make per minute before it gets 429; 0: off. */
  authFailuresPerMinute: number;
  /** Sustained requests per second per endpoint (and token); 0: off. */
  perEndpointPerSecond: number;
  /** Where counters live: this process, or the shared PostgreSQL database. */
  backend: { kind: 'memory' } | { kind: 'postgres'; databaseUrl: string };
}

export interface RateLimits {
  /** Checks the limits before an operation runs. */
  middleware: RequestHandler;
  /**
   * Counts failed authentications: told of every finished request by the request log (one 'close'
   * listener per request serves the log, the metrics and this; a listener of its own on every
   * request cost more than the check it makes).
   */
  observe: CompletionObserver;
  close(): Promise<void>;
}

/** Extra requests an endpoint may make over any 10 s on top of its sustained rate. */
const BURST_WINDOW_SECONDS = 10;
/** Entries of the blocked-address map at which expired ones are swept. */
const SWEEP_BLOCKED_AT = 1000;

/** Deletes the blocks that have run out (exported for its test). */
export function forgetExpiredBlocks(blockedUntil: Map<string, number>, now: number): void {
  for (const [client, until] of blockedUntil) if (until <= now) blockedUntil.delete(client);
}

/** How long a shared counter may take (connect, queue or statement) before the in-memory insurance counts. */
const COUNTER_TIMEOUT_MS = 1000;

type Factory = (options: IRateLimiterOptions & { keyPrefix: string }) => Promise<RateLimiterAbstract>;

function memoryFactory(): Factory {
  return async (options) => new RateLimiterMemory(options);
}

function postgresFactory(pool: pg.Pool): Factory {
  return async (options) => {
    // The library creates its table with CREATE TABLE IF NOT EXISTS; instances starting together
    // can still collide on the catalog, so a failed creation is retried.
    for (let attempt = 1; ; attempt++) {
      try {
        return await new Promise<RateLimiterAbstract>((resolve, reject) => {
          const limiter: RateLimiterAbstract = new BatchedRateLimiterPostgres(
            { ...options, storeClient: pool, tableName: 'rate_limits', insuranceLimiter: new RateLimiterMemory(options) },
            (err?: Error) => (err ? reject(err) : resolve(limiter)),
          );
        });
      } catch (error) {
        if (attempt >= 3) throw error;
      }
    }
  };
}

function setRateLimitHeaders(res: Response, limit: number, state: RateLimiterRes): void {
  res.setHeader('RateLimit-Limit', String(limit));
  res.setHeader('RateLimit-Remaining', String(Math.max(0, state.remainingPoints)));
  res.setHeader('RateLimit-Reset', String(Math.ceil(state.msBeforeNext / 1000)));
}

function tooMany(res: Response, state: RateLimiterRes, detail: string): HttpProblem {
  res.setHeader('Retry-After', String(Math.max(1, Math.ceil(state.msBeforeNext / 1000))));
  return new HttpProblem(429, detail);
}

const usesScheme = (req: Request, scheme: string) => (openapiOf(req).schema?.security ?? []).some((s) => scheme in s);

/** The endpoint's bucket is keyed by its ID and a digest of the token, so wrong tokens cannot drain it. */
function endpointKey(req: Request): string {
  const endpoint = openapiOf(req).pathParams?.endpoint ?? '';
  return `${endpoint}:${(presentedTokenDigest(req) ?? NO_TOKEN).toString('base64url', 0, 12)}`;
}

export async function createRateLimits(settings: RateLimitSettings, logger: Logger): Promise<RateLimits> {
  const pool =
    settings.backend.kind === 'postgres'
      ? new pg.Pool({
          connectionString: settings.backend.databaseUrl,
          max: 4,
          // A counter write takes a millisecond or two. When the database stops answering, the
          // limiters fall back to their in-memory insurance after at most a second, and the request
          // goes on to the store, whose own timeouts answer it 503; without these it waited forever.
          connectionTimeoutMillis: COUNTER_TIMEOUT_MS,
          statement_timeout: COUNTER_TIMEOUT_MS,
          query_timeout: COUNTER_TIMEOUT_MS,
          keepAlive: true,
          application_name: 'chatbridge-rate-limits',
        })
      : undefined;
  pool?.on('error', (err) => logger.warn({ err: { message: err.message } }, 'rate-limit database connection dropped'));
  const make = pool ? postgresFactory(pool) : memoryFactory();

  const authFailures =
    settings.authFailuresPerMinute > 0
      ? await make({ keyPrefix: 'auth-fail', points: settings.authFailuresPerMinute, duration: 60 })
      : undefined;
  const rate = settings.perEndpointPerSecond;
  const perEndpoint =
    rate > 0
      ? new BurstyRateLimiter(
          await make({ keyPrefix: 'endpoint', points: rate, duration: 1 }),
          await make({ keyPrefix: 'endpoint-burst', points: rate, duration: BURST_WINDOW_SECONDS }),
        )
      : undefined;

  // Addresses known to be over the failed-authentication limit, until when (epoch ms). Filled from the
  // shared counter each time a failure is recorded, so a clean request costs no store round trip; an
  // instance learns of a block made elsewhere at that address's next failure here.
  const blockedUntil = new Map<string, number>();
  const block = (client: string, state: RateLimiterRes) => {
    // An address is forgotten when it comes back after its block; those that never come back are
    // swept once the map grows, so many addresses (IPv6 makes them cheap) cannot grow it without end.
    if (blockedUntil.size >= SWEEP_BLOCKED_AT) forgetExpiredBlocks(blockedUntil, Date.now());
    blockedUntil.set(client, Date.now() + state.msBeforeNext);
  };
  const recordFailure = (client: string) =>
    authFailures?.consume(client).then(
      (state) => state.remainingPoints <= 0 && block(client, state), // this failure used up the budget
      (rejection: unknown) => rejection instanceof RateLimiterRes && block(client, rejection),
    );

  const authenticates = (req: Request) => usesScheme(req, 'endpointToken') || usesScheme(req, 'adminBearer');

  // This runs on every request: one `.then`, no async function around an await, and the client address
  // (proxy-addr parses X-Forwarded-For) is worked out only when an address is blocked or a failure is
  // recorded.
  const middleware: RequestHandler = (req, res, next) => {
    const tokenAuth = usesScheme(req, 'endpointToken');
    if (!tokenAuth && !usesScheme(req, 'adminBearer')) return next();
    if (authFailures && blockedUntil.size > 0) {
      const client = req.ip ?? 'unknown';
      const until = blockedUntil.get(client);
      if (until !== undefined && until > Date.now()) {
        res.setHeader('Retry-After', String(Math.max(1, Math.ceil((until - Date.now()) / 1000))));
        return next(new HttpProblem(429, 'Too many failed authentications from this address; retry later.'));
      }
      if (until !== undefined) blockedUntil.delete(client);
    }
    if (!perEndpoint || !tokenAuth) return next();
    // Returned, so that Express 5 hands anything thrown on the way to the error handler.
    return perEndpoint.consume(endpointKey(req)).then(
      (state) => {
        setRateLimitHeaders(res, rate, state);
        next();
      },
      (rejection: unknown) => {
        if (!(rejection instanceof RateLimiterRes)) return next(rejection);
        setRateLimitHeaders(res, rate, rejection);
        next(tooMany(res, rejection, `More than ${rate} requests per second for this endpoint; retry later.`));
      },
    );
  };

  // Every 401 of an operation that authenticates is a failed authentication, whichever layer answered
  // it (the validator's for a missing token, the handler's for a wrong one).
  const observe: CompletionObserver = (req, res) => {
    if (authFailures && res.statusCode === 401 && authenticates(req)) void recordFailure(req.ip ?? 'unknown');
  };

  return { middleware, observe, close: async () => void (await pool?.end()) };
}
