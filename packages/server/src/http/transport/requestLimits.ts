// What Node's HTTP server enforces before the app sees a request: how large its head may be and how
// long it may take to arrive.
import type { ServerOptions } from 'node:http';

/** Request line plus headers; room for every update parameter at its maximum, fully encoded. */
export const MAX_REQUEST_HEAD_BYTES = 128 * 1024;

/** How long a client may take to send a request before it is answered 408 and disconnected. */
export interface SlowClientLimits {
  /** For the request line and headers. */
  headersTimeoutMs: number;
  /** For the whole request, body included. */
  requestTimeoutMs: number;
  /** How often Node looks for connections over either limit. */
  checkIntervalMs: number;
}

/**
 * The head must arrive within 10 s (the spec's `request-timeout` problem says so) and the whole
 * request within 30 s. Node checks both on a timer, every second here (its default, 30 s, would make
 * the 10 s limit meaningless).
 */
export const SLOW_CLIENT_LIMITS: SlowClientLimits = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, checkIntervalMs: 1_000 };

/** The options of `http.createServer` that set these limits. */
export const requestLimits = (slowClients: SlowClientLimits): ServerOptions => ({
  // Every update parameter travels in the query string: 1500 code points percent-encoded can take
  // 18 KB, more than Node's default 16 KB header limit, so the limit is raised.
  maxHeaderSize: MAX_REQUEST_HEAD_BYTES,
  headersTimeout: slowClients.headersTimeoutMs,
  requestTimeout: slowClients.requestTimeoutMs,
  connectionsCheckingInterval: slowClients.checkIntervalMs,
  requireHostHeader: false, // answered by rejectMissingHost (earlyAnswers.ts), with a problem document
});
