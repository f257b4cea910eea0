// One webhook delivery attempt over HTTP: POST the payload, classify the answer. Knows nothing about
// storage or scheduling; the outbox worker decides what to do with the outcome.
//
// Decisions:
// - Transport: one undici Agent per sender (keep-alive connection pools per origin), with a connect
//   timeout, headers/body timeouts and an overall deadline per attempt, and the SSRF-guarded DNS
//   lookup (see addresses.ts). No proxy, no redirects: undici's request() never follows them.
// - Before connecting: the URL must parse, must be https (http only with allowPrivateWebhooks), must not
//   carry credentials (user:password@), and an IP-literal host must be a public address (unless
//   allowPrivateWebhooks). These refusals are permanent ('rejected').
// - Request: POST, `Content-Type: application/json`, `Idempotency-Key: <key>` (the same key on every
//   retry of one delivery, so a receiver that honours it can drop duplicates), `User-Agent`. The
//   response body is read (at most 64 KiB) and discarded, so keep-alive connections can be reused.
// - Outcomes:
//     2xx → delivered (even if reading the discarded body fails afterwards: the receiver accepted it,
//           and retrying would duplicate the message);
//     408, 429, 5xx → retry, with `retryAfterMs` from Retry-After (delta-seconds or HTTP-date) when
//           present and valid, else from the rate-limit headers (see rateLimitHold);
//     a 2xx whose rate-limit headers say the window is used up → delivered, with `holdMs`;
//     timeouts (connect, headers, body, overall deadline) and network errors (refused, reset, DNS
//           failure, TLS failure) → retry;
//     3xx (never followed: a redirect could lead anywhere, and the Location target is never
//           requested), other 4xx, other status codes, forbidden addresses, bad URLs → rejected.
// - Secrets: a webhook URL's path and query are credentials. No `reason`, thrown error or log line
//   produced here contains the URL; reasons are built from status codes and error codes only (a
//   reason may name the host). Use `redactWebhookUrl` to mention a URL in logs.
// - `send` resolves with an outcome for every delivery problem; it throws only for programmer errors
//   (an idempotency key that is not 1–255 visible ASCII characters, or a sender already closed).
import { Agent, type Dispatcher, request } from 'undici';
import { checkLiteralHost, createGuardedLookup, FORBIDDEN_ADDRESS, type Resolver } from './addresses.ts';
import type { WebhookPayload } from './payload.ts';

export type SendOutcome =
  /** `holdMs`: the webhook's rate limit is used up; its next post must wait this long. */
  | { kind: 'delivered'; status: number; holdMs?: number }
  | { kind: 'retry'; status?: number; retryAfterMs?: number; reason: string }
  | { kind: 'rejected'; status?: number; reason: string };

export interface WebhookSenderOptions {
  /** Development only: allow http URLs and private/loopback/link-local addresses. */
  allowPrivateWebhooks: boolean;
  /** TCP + TLS connection setup. Default 5 s. */
  connectTimeoutMs?: number;
  /** Waiting for response headers, and between body chunks; also the overall deadline of an attempt
   *  after the connect timeout. Default 15 s. */
  requestTimeoutMs?: number;
  /** Default "chatbridge-webhook/1.0". */
  userAgent?: string;
  /** Test seam: the resolver behind the guarded lookup (default dns.lookup, all addresses). */
  resolve?: Resolver;
  /** Test seam: the clock used for HTTP-date Retry-After values. */
  now?: () => number;
}

export interface WebhookSender {
  /** `stop` ends the attempt early (shutdown); it then counts as a retry. */
  send(url: string, payload: WebhookPayload, idempotencyKey: string, stop?: AbortSignal): Promise<SendOutcome>;
  /** The longest one attempt can take (connect plus answer): a claimed delivery's lease must outlast it. */
  readonly attemptDeadlineMs: number;
  /** Waits for attempts in flight, then closes every connection. */
  close(): Promise<void>;
}

const DEFAULTS = { connectTimeoutMs: 5_000, requestTimeoutMs: 15_000, userAgent: 'chatbridge-webhook/1.0' } as const;
const MAX_DISCARDED_BODY = 64 * 1024;
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** "https://host/…" (scheme, host and port only): a webhook URL safe to log. */
export function redactWebhookUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}/…`;
  } catch {
    return '(invalid URL)';
  }
}

/**
 * Retry-After (RFC 9110 §10.2.3) in milliseconds from `now`: delta-seconds or an HTTP-date (a date in
 * the past gives 0). Undefined when absent or invalid.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined; // "1.5", "-3": not a delta-seconds, not a date
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Error codes anywhere in the cause chain / AggregateError members, outermost first. */
function errorCodes(error: unknown, seen = new Set<unknown>()): string[] {
  if (typeof error !== 'object' || error === null || seen.has(error)) return [];
  seen.add(error);
  const e = error as { code?: unknown; name?: unknown; cause?: unknown; errors?: unknown };
  const own = typeof e.code === 'string' ? [e.code] : typeof e.name === 'string' && e.name !== 'Error' ? [e.name] : [];
  const nested = [e.cause, ...(Array.isArray(e.errors) ? e.errors : [])].flatMap((c) => errorCodes(c, seen));
  return [...own, ...nested];
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT', 'TimeoutError']);

function classifyError(error: unknown): SendOutcome {
  const codes = errorCodes(error);
  if (codes.includes(FORBIDDEN_ADDRESS)) {
    const forbidden = findForbidden(error);
    return { kind: 'rejected', reason: forbidden ? forbidden : 'the host resolves to a forbidden address' };
  }
  const timeout = codes.find((c) => TIMEOUT_CODES.has(c));
  if (timeout) return { kind: 'retry', reason: `timeout (${timeout})` };
  if (codes[0] === 'UND_ERR_INVALID_ARG') return { kind: 'rejected', reason: 'invalid request (UND_ERR_INVALID_ARG)' };
  return { kind: 'retry', reason: `network error (${codes.join(', ') || 'unknown'})` };
}

/** The ForbiddenAddressError's own message (host and address only, never a URL). */
function findForbidden(error: unknown, depth = 0): string | undefined {
  if (typeof error !== 'object' || error === null || depth > 8) return undefined;
  const e = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (e.code === FORBIDDEN_ADDRESS && typeof e.message === 'string') return e.message;
  for (const inner of [e.cause, ...(Array.isArray(e.errors) ? e.errors : [])]) {
    const found = findForbidden(inner, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** The longest pause a rate-limit header may ask for (a hostile receiver cannot park a webhook's queue). */
const MAX_HOLD_MS = 5 * 60_000;

/**
 * How long a webhook asks to be left alone by the rate-limit headers chat platforms send with every
 * answer: none left in the window (`X-RateLimit-Remaining: 0`), and the window's end, in seconds from
 * now (`X-RateLimit-Reset-After`, fractions allowed) or as epoch seconds (`X-RateLimit-Reset`).
 */
export function rateLimitHold(headers: Record<string, string | string[] | undefined>, now: number): number | undefined {
  const first = (name: string) => {
    const v = headers[name];
    return (Array.isArray(v) ? v[0] : v)?.trim();
  };
  if (first('x-ratelimit-remaining') !== '0') return undefined;
  const after = Number(first('x-ratelimit-reset-after') ?? Number.NaN);
  if (Number.isFinite(after) && after >= 0) return Math.min(Math.ceil(after * 1000), MAX_HOLD_MS);
  const reset = Number(first('x-ratelimit-reset') ?? Number.NaN);
  if (Number.isFinite(reset) && reset > 0) return Math.min(Math.max(0, Math.ceil(reset * 1000 - now)), MAX_HOLD_MS);
  return undefined;
}

function classifyStatus(status: number, headers: Record<string, string | string[] | undefined>, now: number): SendOutcome {
  const hold = rateLimitHold(headers, now);
  if (status >= 200 && status < 300)
    return hold === undefined ? { kind: 'delivered', status } : { kind: 'delivered', status, holdMs: hold };
  if (status === 408 || status === 429 || (status >= 500 && status < 600)) {
    const retryAfterMs = parseRetryAfter(headers['retry-after'], now) ?? hold;
    const outcome: SendOutcome = { kind: 'retry', status, reason: `HTTP ${status}` };
    if (retryAfterMs !== undefined) outcome.retryAfterMs = retryAfterMs;
    return outcome;
  }
  if (status >= 300 && status < 400) return { kind: 'rejected', status, reason: `HTTP ${status}: redirects are not followed` };
  return { kind: 'rejected', status, reason: `HTTP ${status}` };
}

/** Why `url` must not be requested, or the parsed URL. */
function checkUrl(url: string, allowPrivateWebhooks: boolean): { ok: true; url: URL } | { ok: false; reason: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'invalid URL' };
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && allowPrivateWebhooks)) {
    return { ok: false, reason: allowPrivateWebhooks ? 'URL scheme must be https or http' : 'URL scheme must be https' };
  }
  if (parsed.username !== '' || parsed.password !== '') return { ok: false, reason: 'URL must not contain credentials' };
  const forbidden = checkLiteralHost(parsed.hostname, allowPrivateWebhooks);
  if (forbidden) return { ok: false, reason: forbidden.message };
  parsed.hash = '';
  return { ok: true, url: parsed };
}

export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULTS.requestTimeoutMs;
  const userAgent = options.userAgent ?? DEFAULTS.userAgent;
  const now = options.now ?? Date.now;
  const lookupOptions = { allowPrivateWebhooks: options.allowPrivateWebhooks, ...(options.resolve && { resolve: options.resolve }) };
  const agent = new Agent({
    connect: { timeout: connectTimeoutMs, lookup: createGuardedLookup(lookupOptions) },
    headersTimeout: requestTimeoutMs,
    bodyTimeout: requestTimeoutMs,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
  });
  let closed = false;

  async function send(url: string, payload: WebhookPayload, idempotencyKey: string, stop?: AbortSignal): Promise<SendOutcome> {
    if (closed) throw new Error('the webhook sender is closed');
    if (!IDEMPOTENCY_KEY.test(idempotencyKey)) throw new TypeError('idempotencyKey must be 1-255 visible ASCII characters');
    const checked = checkUrl(url, options.allowPrivateWebhooks);
    if (!checked.ok) return { kind: 'rejected', reason: checked.reason };

    const deadline = AbortSignal.timeout(connectTimeoutMs + requestTimeoutMs);
    const signal = stop ? AbortSignal.any([deadline, stop]) : deadline;
    let response: Dispatcher.ResponseData;
    try {
      response = await request(checked.url, {
        dispatcher: agent,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'idempotency-key': idempotencyKey,
          'user-agent': userAgent,
        },
        body: JSON.stringify(payload),
        signal,
      });
    } catch (error) {
      return classifyError(error);
    }

    const outcome = classifyStatus(response.statusCode, response.headers, now());
    try {
      await response.body.dump({ limit: MAX_DISCARDED_BODY, signal });
    } catch {
      // The status is what counts: a failure while discarding the body changes nothing.
    }
    return outcome;
  }

  return {
    send,
    attemptDeadlineMs: connectTimeoutMs + requestTimeoutMs,
    async close() {
      if (closed) return;
      closed = true;
      await agent.close();
    },
  };
}
