// The whole running service: HTTP API, relay (outbox worker and TTL sweeper) and webhook sender over
// one store. main.ts and the tests build it the same way.
import { BotKeyCache } from './bots/keyCache.ts';
import { createWebhookSender } from './delivery/send.ts';
import { type EventStreamSettings, startEvents } from './events/streams.ts';
import type { AppDeps, Readiness } from './http/deps.ts';
import type { ConnectionLimits } from './http/transport/connectionLimits.ts';
import type { Logger } from './logger.ts';
import { instrumentStore, measureGroupCommits } from './observability/instrumentStore.ts';
import { createMetrics, type DeliveryOutcome } from './observability/metrics.ts';
import { Relay, type RelayStats } from './relay/relay.ts';
import { createRateLimits, type RateLimitSettings } from './http/auth/rateLimits.ts';
import { type HttpListener, listen } from './server.ts';
import type { SlowClientLimits } from './http/transport/requestLimits.ts';
import type { EndpointStore } from './store/port.ts';
import type { QueueLimits } from './domain/messageQueue.ts';

export interface ServiceOptions {
  store: EndpointStore;
  logger: Logger;
  adminTokenHash: Uint8Array | undefined;
  /** Development only: plain http webhooks and private/loopback destinations. */
  allowPrivateWebhooks: boolean;
  validateResponses: boolean;
  messageTtlMs: number;
  /** Unread messages an endpoint may hold; default MESSAGE_QUEUE_LIMITS. */
  messageQueueLimits?: QueueLimits;
  clock?: () => number;
  relay?: {
    leaseMs?: number;
    pollMs?: number;
    requestTimeoutMs?: number;
    stopGraceMs?: number;
    maxInFlight?: number;
    maxInFlightPerEndpoint?: number;
  };
  /** Browser origins allowed to call the record operations (CORS); default none. */
  corsOrigins?: string[];
  /** Abuse limits; default off (the server's configuration turns them on). */
  rateLimits?: RateLimitSettings;
  trustProxy?: boolean | number | string;
  /** Open connections allowed, in all and per client address; default 10,000 and 1,000. */
  connections?: ConnectionLimits;
  /** A second listener serving only /-/live, /-/ready and /-/metrics (0: any free port); default none. */
  managementPort?: number | undefined;
  /** Event streams (streamEndpointEvents): heartbeat interval and the like; defaults in events/streams.ts. */
  events?: Partial<EventStreamSettings>;
  /** The built HTML docs served at `/-/docs`; default: where `pnpm build` puts them. */
  docsFile?: string;
  /** How long clients may take to send a request; default SLOW_CLIENT_LIMITS (http/transport/requestLimits.ts). */
  slowClients?: SlowClientLimits;
}

const DELIVERY_OUTCOMES: Record<Exclude<keyof RelayStats, 'expired'>, DeliveryOutcome> = {
  delivered: 'delivered',
  retried: 'retried',
  rejected: 'rejected',
  gaveUp: 'gave_up',
  superseded: 'superseded',
  held: 'held',
};

export interface RunningService {
  url: string;
  port: number;
  /** The management listener's URL, when one was asked for. */
  managementUrl: string | undefined;
  readiness: Readiness;
  relay: Relay;
  /** Drains: readiness goes false, HTTP finishes in-flight requests, deliveries finish, store closes. */
  close(): Promise<void>;
}

export async function startService(options: ServiceOptions, port: number, host: string): Promise<RunningService> {
  const { logger } = options;
  const clock = options.clock ?? Date.now;
  const rawStore = options.store;
  const metrics = createMetrics({
    pendingMessages: () => rawStore.endpoints.countPending(),
    queuedDeliveries: () => rawStore.deliveries.count(),
  });
  measureGroupCommits(rawStore, metrics);
  const store = instrumentStore(rawStore, metrics);
  const sender = createWebhookSender({
    allowPrivateWebhooks: options.allowPrivateWebhooks,
    ...(options.relay?.requestTimeoutMs !== undefined && { requestTimeoutMs: options.relay.requestTimeoutMs }),
  });
  const relay = new Relay({
    store,
    sender,
    logger: logger.child({ component: 'relay' }),
    clock,
    messageTtlMs: options.messageTtlMs,
    observe: (event) => {
      if (event === 'expired') metrics.expiredMessages.inc();
      else metrics.deliveries.inc({ outcome: DELIVERY_OUTCOMES[event] });
    },
    ...(options.relay?.leaseMs !== undefined && { leaseMs: options.relay.leaseMs }),
    ...(options.relay?.pollMs !== undefined && { pollMs: options.relay.pollMs }),
    ...(options.relay?.stopGraceMs !== undefined && { stopGraceMs: options.relay.stopGraceMs }),
    ...(options.relay?.maxInFlight !== undefined && { maxInFlight: options.relay.maxInFlight }),
    ...(options.relay?.maxInFlightPerEndpoint !== undefined && { maxInFlightPerEndpoint: options.relay.maxInFlightPerEndpoint }),
  });
  const events = await startEvents({
    store,
    logger: logger.child({ component: 'events' }),
    ...(options.events && { settings: options.events }),
  });
  const rateLimits = createRateLimits(options.rateLimits ?? { authFailuresPerMinute: 0, perEndpointPerSecond: 0 }, store.counters);
  const readiness: Readiness = { draining: false };
  // A key rotated or deleted anywhere ends the streams it opened here, within the key copy's max age.
  const bots = new BotKeyCache(store.bots, { onRevoked: (bot) => events.streams.endBot(bot) });
  const stopWatchingBots = bots.watchRevocations(() => events.streams.hasBotStreams);
  const deps: AppDeps = {
    store,
    logger,
    adminTokenHash: options.adminTokenHash,
    allowPrivateWebhooks: options.allowPrivateWebhooks,
    validateResponses: options.validateResponses,
    readiness,
    clock,
    messageTtlMs: options.messageTtlMs,
    messageQueueLimits: options.messageQueueLimits,
    onDeliveriesQueued: () => relay.wake(),
    metrics,
    corsOrigins: options.corsOrigins ?? [],
    rateLimits,
    trustProxy: options.trustProxy ?? false,
    events: events.streams,
    bots,
    ...(options.docsFile !== undefined && { docsFile: options.docsFile }),
  };
  let http: HttpListener;
  try {
    http = await listen(deps, port, host, {
      ...(options.connections && { connections: options.connections }),
      managementPort: options.managementPort,
      ...(options.slowClients && { slowClients: options.slowClients }),
    });
  } catch (error) {
    // Nothing listens: what was opened for it is closed, so the process can end.
    stopWatchingBots();
    await events.close();
    throw error;
  }
  relay.start();
  return {
    url: http.url,
    port: http.port,
    managementUrl: http.managementUrl,
    readiness,
    relay,
    async close() {
      readiness.draining = true;
      events.streams.endAll(); // open event streams would otherwise hold the HTTP server open
      stopWatchingBots();
      await http.close();
      await relay.stop();
      await sender.close();
      await events.close();
      await store.close();
    },
  };
}
