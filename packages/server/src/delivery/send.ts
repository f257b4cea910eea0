// One webhook delivery attempt over HTTP: create, edit or delete a message through a chat webhook, and
// classify the answer. Knows nothing about storage or scheduling; the outbox worker decides what to do
// with the outcome.
//
// Decisions:
// - Transport: one undici Agent per sender (keep-alive connection pools per origin), with a connect
//   timeout, headers/body timeouts and an overall deadline per attempt, and the SSRF-guarded DNS
//   lookup (see addresses.ts). No proxy, no redirects: undici's request() never follows them.
// - Before connecting: the URL must parse, must be https (http only with allowPrivateWebhooks), must not
//   carry credentials (user:password@), and an IP-literal host must be a public address (unless
//   allowPrivateWebhooks). These refusals are permanent ('rejected').
// - The calls (`deliver`; the chat-webhook conventions the spec's webhooks declare):
//     create → POST to the webhook URL with `wait=true` in its query (appended with `&` after an
//           existing query; a `wait` already there is replaced, so the answer always carries the
//           created message), the payload as JSON. The answer's `id` is the copy's message ID (see
//           messageId.ts); the answer body is read for it, at most 64 KiB (a longer answer is not
//           read further and gives no ID);
//     edit → PATCH `<webhook URL's path>/messages/<ID>` (percent-encoded; the webhook URL's query, such as
//           a thread, kept after it), the payload as JSON;
//     delete → DELETE on that same URL, no body.
//   An ID that is not 1-100 printable ASCII characters, or that is "." or "..", is refused ('rejected')
//   before connecting: those two are dot segments in a path (`…/messages/..` is the webhook itself, and
//   a DELETE there would remove the webhook).
// - Request headers, on every call: `Idempotency-Key: <key>` (the same key on every retry of one
//   delivery, so a receiver that honours it can drop duplicates), `User-Agent`, and with a body
//   `Content-Type: application/json`. An answer body that is not read for an ID is read (at most 64 KiB)
//   and discarded, so keep-alive connections can be reused.
// - Outcomes, the same for every call:
//     2xx → delivered (even if reading the body fails afterwards: the receiver accepted it, and
//           retrying a create would duplicate the message; the create then has no ID);
//     404 to an edit or delete → delivered: the copy is gone (deleted on the platform, or its webhook
//           removed, and a removed webhook can change nothing), so nothing is left to edit or delete
//           and a retry would get the same answer;
//     408, 429, 5xx → retry, with `retryAfterMs` from Retry-After (delta-seconds or HTTP-date) when
//           present and valid, else from the rate-limit headers (see rateLimitHold);
//     a 2xx (or an edit's or delete's 404) whose rate-limit headers say the window is used up →
//           delivered, with `holdMs`;
//     timeouts (connect, headers, body, overall deadline) and network errors (refused, reset, DNS
//           failure, TLS failure) → retry;
//     3xx (never followed: a redirect could lead anywhere, and the Location target is never
//           requested), other 4xx, other status codes, forbidden addresses, bad URLs → rejected.
// - Secrets: a webhook URL's path and query are credentials. No `reason`, thrown error or log line
//   produced here contains the URL; reasons are built from status codes and error codes only (a
//   reason may name the host). Use `redactWebhookUrl` to mention a URL in logs.
// - `deliver` resolves with an outcome for every delivery problem; it throws only for
//   programmer errors (an idempotency key that is not 1–255 visible ASCII characters, an unknown call
//   kind, or a sender already closed).
import { Agent, type Dispatcher, request } from 'undici';
import { checkLiteralHost, createGuardedLookup, FORBIDDEN_ADDRESS, type Resolver } from './addresses.ts';
import { isMessageId } from '../domain/messageIds.ts';
import { messageIdFromAnswer } from './messageId.ts';

export type SendOutcome =
  /**
   * `holdMs`: the webhook's rate limit is used up; its next post must wait this long.
   * `messageId`: a create's answer named the created message (its ID on the receiving platform).
   */
  | { kind: 'delivered'; status: number; holdMs?: number; messageId?: string }
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

/**
 * What one delivery does at a webhook: create the message (the payload as the spec's messagePending
 * body), or edit or delete the webhook's copy of it, named by its ID on the receiving platform (the
 * edit's payload as the spec's messageEdited body).
 */
export type DeliveryCall =
  | { kind: 'create'; payload: unknown }
  | { kind: 'edit'; messageId: string; payload: unknown }
  | { kind: 'delete'; messageId: string };

export interface WebhookSender {
  /**
   * Makes `call` at the webhook (see the decisions at the top of this file); a create's `delivered`
   * outcome carries the created message's ID when the answer names one. `stop` ends the attempt early
   * (shutdown); it then counts as a retry.
   */
  deliver(url: string, call: DeliveryCall, idempotencyKey: string, stop?: AbortSignal): Promise<SendOutcome>;
  /** The longest one attempt can take (connect plus answer): a claimed delivery's lease must outlast it. */
  readonly attemptDeadlineMs: number;
  /** Waits for attempts in flight, then closes every connection. */
  close(): Promise<void>;
}

const DEFAULTS = { connectTimeoutMs: 5_000, requestTimeoutMs: 15_000, userAgent: 'chatbridge-webhook/1.0' } as const;
/** The most of an answer body read, whether for a created message's ID or to discard it. */
const MAX_ANSWER_BODY = 64 * 1024;
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

/** The webhook's create URL: its query with `wait=true` as the only `wait` parameter, the rest as it was. */
function withWait(url: URL): URL {
  const target = new URL(url);
  const kept = target.search
    .slice(1)
    .split('&')
    .filter((part) => part !== '' && queryName(part) !== 'wait');
  target.search = [...kept, 'wait=true'].join('&');
  return target;
}

/** A query part's name, decoded as a form would be; undefined when it does not decode. */
function queryName(part: string): string | undefined {
  const name = part.split('=', 1)[0]!.replaceAll('+', ' ');
  try {
    return decodeURIComponent(name);
  } catch {
    return undefined;
  }
}

/**
 * The URL of the webhook's copy of a message: `<path>/messages/<ID>`, the query kept. Undefined for an
 * ID that is not one, or that a URL would read as a dot segment ("." or ".."; percent-encoding does not
 * help, URLs read "%2e" as a dot too), so that no edit or delete can reach another resource.
 */
function messageUrl(url: URL, messageId: string): URL | undefined {
  if (!isMessageId(messageId) || messageId === '.' || messageId === '..') return undefined;
  const target = new URL(url);
  target.pathname = `${target.pathname.replace(/\/+$/, '')}/messages/${encodeURIComponent(messageId)}`;
  return target;
}

/**
 * The created message's ID from the answer body, reading at most MAX_ANSWER_BODY bytes: a longer body
 * is not read to its end (the stream is destroyed, the connection not reused) and gives no ID.
 */
async function readMessageId(body: Dispatcher.ResponseData['body']): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_ANSWER_BODY) return undefined; // leaving the loop destroys the body
    chunks.push(chunk);
  }
  return messageIdFromAnswer(Buffer.concat(chunks, size).toString('utf8'));
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

/** One request as `exchange` makes it. */
interface Exchange {
  method: 'POST' | 'PATCH' | 'DELETE';
  target: URL;
  /** JSON text; undefined sends no body (and no Content-Type). */
  body: string | undefined;
  /** A create: a 2xx answer's body is read for the created message's ID instead of being discarded. */
  readsId: boolean;
  /** An edit or delete: a 404 means the copy is gone, which is what they need (delivered). */
  goneIsDone: boolean;
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

  /** The checks every call makes before anything else: programmer errors throw, a bad URL is refused. */
  function prepare(url: string, idempotencyKey: string): { ok: true; url: URL } | { ok: false; reason: string } {
    if (closed) throw new Error('the webhook sender is closed');
    if (!IDEMPOTENCY_KEY.test(idempotencyKey)) throw new TypeError('idempotencyKey must be 1-255 visible ASCII characters');
    return checkUrl(url, options.allowPrivateWebhooks);
  }

  /** One request to a checked URL and its outcome: the one path every call takes. */
  async function exchange(call: Exchange, idempotencyKey: string, stop: AbortSignal | undefined): Promise<SendOutcome> {
    const deadline = AbortSignal.timeout(connectTimeoutMs + requestTimeoutMs);
    const signal = stop ? AbortSignal.any([deadline, stop]) : deadline;
    const headers: Record<string, string> = { 'idempotency-key': idempotencyKey, 'user-agent': userAgent };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    let response: Dispatcher.ResponseData;
    try {
      response = await request(call.target, {
        dispatcher: agent,
        method: call.method,
        headers,
        ...(call.body !== undefined && { body: call.body }),
        signal,
      });
    } catch (error) {
      return classifyError(error);
    }

    const status = response.statusCode;
    let outcome = classifyStatus(status, response.headers, now());
    if (call.goneIsDone && status === 404) {
      const hold = rateLimitHold(response.headers, now());
      outcome = hold === undefined ? { kind: 'delivered', status } : { kind: 'delivered', status, holdMs: hold };
    }
    if (call.readsId && outcome.kind === 'delivered') {
      try {
        const messageId = await readMessageId(response.body);
        if (messageId !== undefined) outcome.messageId = messageId;
      } catch {
        // Delivered all the same (see the decisions at the top of this file), only without an ID.
      }
      return outcome;
    }
    try {
      await response.body.dump({ limit: MAX_ANSWER_BODY, signal });
    } catch {
      // The status is what counts: a failure while discarding the body changes nothing.
    }
    return outcome;
  }

  async function deliver(url: string, call: DeliveryCall, idempotencyKey: string, stop?: AbortSignal): Promise<SendOutcome> {
    const kind = (call as { kind?: unknown } | null)?.kind;
    if (kind !== 'create' && kind !== 'edit' && kind !== 'delete') throw new TypeError('call.kind must be create, edit or delete');
    const checked = prepare(url, idempotencyKey);
    if (!checked.ok) return { kind: 'rejected', reason: checked.reason };
    if (call.kind === 'create') {
      const create: Exchange = {
        method: 'POST',
        target: withWait(checked.url),
        body: JSON.stringify(call.payload),
        readsId: true,
        goneIsDone: false,
      };
      return exchange(create, idempotencyKey, stop);
    }
    const target = messageUrl(checked.url, call.messageId);
    if (!target) return { kind: 'rejected', reason: 'not a usable message ID' };
    const change: Exchange =
      call.kind === 'edit'
        ? { method: 'PATCH', target, body: JSON.stringify(call.payload), readsId: false, goneIsDone: true }
        : { method: 'DELETE', target, body: undefined, readsId: false, goneIsDone: true };
    return exchange(change, idempotencyKey, stop);
  }

  return {
    deliver,
    attemptDeadlineMs: connectTimeoutMs + requestTimeoutMs,
    async close() {
      if (closed) return;
      closed = true;
      await agent.close();
    },
  };
}
