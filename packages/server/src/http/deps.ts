import type { QueueLimits } from '../domain/messageQueue.ts';
import type { BotKeyCache } from '../bots/keyCache.ts';
import type { EventStreams } from '../events/streams.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { EndpointStore } from '../store/port.ts';
import type { RateLimits } from './auth/rateLimits.ts';

export interface Readiness {
  /** Set on shutdown: readiness turns false so load balancers drain the instance. */
  draining: boolean;
}

/** Everything the app needs from outside; main.ts and the tests build it. */
export interface AppDeps {
  store: EndpointStore;
  logger: Logger;
  /** SHA-256 of the admin token; undefined disables the admin API. */
  adminTokenHash: Uint8Array | undefined;
  allowPrivateWebhooks: boolean;
  validateResponses: boolean;
  readiness: Readiness;
  /** Epoch milliseconds; injectable so lifecycle tests control time. */
  clock: () => number;
  /** How long a pending message may wait for its reads before it is dropped. */
  messageTtlMs: number;
  /** Unread messages an endpoint may hold; default MESSAGE_QUEUE_LIMITS (domain/messageQueue.ts). */
  messageQueueLimits?: QueueLimits | undefined;
  /** Called after a commit queued webhook deliveries, so the relay starts at once. */
  onDeliveriesQueued: () => void;
  metrics: Metrics;
  /** Browser origins allowed to call the record operations; empty: no CORS headers at all. */
  corsOrigins: string[];
  /** Abuse limits, checked after validation and before the handler; failures counted on completion. */
  rateLimits: Pick<RateLimits, 'middleware' | 'observe'>;
  /** Express `trust proxy`: how client addresses are read behind load balancers. */
  trustProxy: boolean | number | string;
  /** The change feed and open event streams (streamEndpointEvents). */
  events: EventStreams;
  /** The bot keys, in memory (see bots/keyCache.ts). */
  bots: BotKeyCache;
  /** The built HTML docs served at `/-/docs`; default: where `pnpm build` puts them. */
  docsFile?: string;
}
