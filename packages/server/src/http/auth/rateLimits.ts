// Abuse limits (rate-limiter-flexible's answers): failed authentications per client address and
// endpoint, with a far higher ceiling per address, and requests per endpoint with a burst allowance.
// The counters are the store's (on PostgreSQL they live in the shared database, so the limits hold
// across instances). Each limit is off when set to 0.
//
// Failures are counted per address and endpoint because one bot host serves many communities from one
// address: a stale token of one of them must not cost the others their answers. Failures with a bot key
// (a bearer credential) are counted per address, key and endpoint for the same reason: a bot host runs
// several bots, and one stale key after a rotation must block only itself, not the host's other keys
// (a key is 432 random bits; guessing one is bounded by the per-address ceiling).
import type { Request, RequestHandler, Response } from 'express';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { openapiOf } from '../operations.ts';
import type { Counters, WindowLimiter } from '../../store/counters.ts';
import { HttpProblem } from '../problem.ts';
import { hashToken } from '../../tokens.ts';
import { presentedCredentialDigest, presentsBotKey } from './authenticate.ts';
import type { CompletionObserver } from '../observe/requestLog.ts';

/** Requests without a token share one bucket per endpoint (the validator rejects them anyway). */
const NO_TOKEN = hashToken('');

export interface RateLimitSettings {
  /**
   * Failed authentications a client address may make per minute against one endpoint (or the admin
   * API) before its requests to that endpoint get 429; 0: off.
   */
  authFailuresPerMinute: number;
  /**
   * Failed authentications a client address may make per minute against all endpoints together
   * before every authenticated request from it gets 429; 0 or absent: no ceiling.
   */
  authFailuresPerAddressPerMinute?: number;
  /** Sustained requests per second per endpoint (and token); 0: off. */
  perEndpointPerSecond: number;
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
}

/** Extra requests an endpoint may make over any 10 s on top of its sustained rate. */
const BURST_WINDOW_SECONDS = 10;
/** Entries of the blocked map at which expired ones are first swept. */
const SWEEP_BLOCKED_AT = 1000;

/** Deletes the blocks that have run out (exported for its test). */
export function forgetExpiredBlocks(blockedUntil: Map<string, number>, now: number): void {
  for (const [client, until] of blockedUntil) if (until <= now) blockedUntil.delete(client);
}

/** Past the sustained rate, the burst allowance answers; rate-limiter-flexible's BurstyRateLimiter, over our limiters. */
function withBurst(rate: WindowLimiter, burst: WindowLimiter): WindowLimiter {
  const combined = (r: RateLimiterRes, b: RateLimiterRes) =>
    new RateLimiterRes(r.remainingPoints, Math.min(r.msBeforeNext, b.msBeforeNext), r.consumedPoints, r.isFirstInDuration);
  return {
    consume: (key) =>
      rate.consume(key).catch((refused: unknown) => {
        if (!(refused instanceof RateLimiterRes)) throw refused;
        return burst.consume(key).then(
          (allowed) => combined(refused, allowed),
          (alsoRefused: unknown) => {
            throw alsoRefused instanceof RateLimiterRes ? combined(refused, alsoRefused) : alsoRefused;
          },
        );
      }),
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

/**
 * The endpoint's bucket is keyed by its ID and a digest of the token or bot key, so wrong tokens
 * cannot drain it, and each bot key has its own budget on each endpoint.
 */
function endpointKey(req: Request): string {
  const endpoint = openapiOf(req).pathParams?.endpoint ?? '';
  return `${endpoint}:${(presentedCredentialDigest(req) ?? NO_TOKEN).toString('base64url', 0, 12)}`;
}

/**
 * What a failed authentication was against: the endpoint of the path (or none: lookup, the stream of
 * all changes), with the bot key when one is presented; or the admin API as one.
 */
function credentialScope(req: Request, tokenAuth: boolean): string {
  if (!tokenAuth) return 'admin';
  const endpoint = `endpoint ${openapiOf(req).pathParams?.endpoint ?? ''}`;
  return presentsBotKey(req) ? `key ${presentedCredentialDigest(req)!.toString('base64url', 0, 12)} ${endpoint}` : endpoint;
}

export function createRateLimits(settings: RateLimitSettings, counters: Counters): RateLimits {
  const perPair = settings.authFailuresPerMinute;
  const perAddress = settings.authFailuresPerAddressPerMinute ?? 0;
  const rate = settings.perEndpointPerSecond;
  const make = counters.limiter.bind(counters);

  const pairFailures = perPair > 0 ? make({ keyPrefix: 'auth-fail', points: perPair, duration: 60 }) : undefined;
  const addressFailures = perAddress > 0 ? make({ keyPrefix: 'auth-fail-address', points: perAddress, duration: 60 }) : undefined;
  const countsFailures = pairFailures !== undefined || addressFailures !== undefined;
  const perEndpoint =
    rate > 0
      ? withBurst(
          make({ keyPrefix: 'endpoint', points: rate, duration: 1 }),
          make({ keyPrefix: 'endpoint-burst', points: rate, duration: BURST_WINDOW_SECONDS }),
        )
      : undefined;

  // Blocks known to this instance, until when (epoch ms): keyed `address` (the ceiling) or
  // `address scope` (one endpoint, or the admin API). Filled from the shared counter each time a
  // failure is recorded, so a clean request costs no store round trip; an instance learns of a block
  // made elsewhere at that address's next failure here.
  const blockedUntil = new Map<string, number>();
  // Expired blocks are swept once the map reaches this size; the next sweep waits until it has
  // doubled again, so a map full of live blocks costs one sweep per doubling, not one per failure.
  let sweepAt = SWEEP_BLOCKED_AT;
  const block = (key: string, state: RateLimiterRes) => {
    if (blockedUntil.size >= sweepAt) {
      forgetExpiredBlocks(blockedUntil, Date.now());
      sweepAt = Math.max(SWEEP_BLOCKED_AT, blockedUntil.size * 2);
    }
    blockedUntil.set(key, Date.now() + state.msBeforeNext);
  };
  const count = (limiter: WindowLimiter | undefined, key: string) =>
    limiter?.consume(key).then(
      (state) => state.remainingPoints <= 0 && block(key, state), // this failure used up the budget
      (rejection: unknown) => rejection instanceof RateLimiterRes && block(key, rejection),
    );
  const recordFailure = (client: string, scope: string) => {
    void count(pairFailures, `${client} ${scope}`);
    void count(addressFailures, client);
  };

  /** The block in force for this key, if any (a run-out one is forgotten). */
  const blockOf = (key: string, now: number): number | undefined => {
    const until = blockedUntil.get(key);
    if (until === undefined) return undefined;
    if (until > now) return until;
    blockedUntil.delete(key);
    return undefined;
  };

  // This runs on every request: one `.then`, no async function around an await, and the client address
  // (proxy-addr parses X-Forwarded-For) is worked out only when something is blocked or a failure is
  // recorded.
  const middleware: RequestHandler = (req, res, next) => {
    const tokenAuth = usesScheme(req, 'endpointToken') || usesScheme(req, 'botKey');
    if (!tokenAuth && !usesScheme(req, 'adminBearer')) return next();
    if (blockedUntil.size > 0) {
      const client = req.ip ?? 'unknown';
      const now = Date.now();
      const addressBlock = blockOf(client, now);
      const until = addressBlock ?? blockOf(`${client} ${credentialScope(req, tokenAuth)}`, now);
      if (until !== undefined) {
        res.setHeader('Retry-After', String(Math.max(1, Math.ceil((until - now) / 1000))));
        const what =
          addressBlock !== undefined
            ? 'from this address'
            : tokenAuth
              ? presentsBotKey(req)
                ? 'with this key from this address'
                : 'for this endpoint from this address'
              : 'for the admin API from this address';
        return next(new HttpProblem(429, `Too many failed authentications ${what}; retry later.`));
      }
    }
    // The per-endpoint rate counts requests to one endpoint; a lookup addresses none.
    if (!perEndpoint || !tokenAuth || openapiOf(req).pathParams?.endpoint === undefined) return next();
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
    if (!countsFailures || res.statusCode !== 401) return;
    const tokenAuth = usesScheme(req, 'endpointToken') || usesScheme(req, 'botKey');
    if (tokenAuth || usesScheme(req, 'adminBearer')) recordFailure(req.ip ?? 'unknown', credentialScope(req, tokenAuth));
  };

  return { middleware, observe };
}
