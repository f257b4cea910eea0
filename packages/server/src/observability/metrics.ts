// Prometheus metrics (prom-client) in a registry of the app's own: no module-level state, so tests
// and several apps in one process never share counters.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type DeliveryOutcome = 'delivered' | 'retried' | 'rejected' | 'gave_up' | 'superseded' | 'held';

export interface Metrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<'operation' | 'status'>;
  readonly httpDuration: Histogram<'operation'>;
  readonly storeDuration: Histogram<'method' | 'result'>;
  readonly deliveries: Counter<'outcome'>;
  readonly expiredMessages: Counter;
}

/** SQLite's group commits: how long each holds the event loop, and how many updates it carries. */
export interface GroupCommitMetrics {
  readonly duration: Histogram<'phase'>;
  readonly updates: Histogram;
}

/** Registered only for a store that groups its commits (SQLite), so PostgreSQL shows no empty series. */
export function createGroupCommitMetrics(registry: Registry): GroupCommitMetrics {
  return {
    duration: new Histogram({
      name: 'chatbridge_sqlite_group_commit_seconds',
      help: 'Time a group commit holds the event loop, by phase: statements (every update and acknowledged delivery in it) and commit (the WAL write, its fsync, any checkpoint).',
      labelNames: ['phase'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
      registers: [registry],
    }),
    updates: new Histogram({
      name: 'chatbridge_sqlite_group_commit_updates',
      help: 'Updates and acknowledged deliveries committed together in one transaction (one fsync).',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers: [registry],
    }),
  };
}

/** Gauges read from the store when Prometheus scrapes. */
export interface StoreGauges {
  pendingMessages(): Promise<number>;
  queuedDeliveries(): Promise<number>;
}

export function createMetrics(gauges?: StoreGauges): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'chatbridge_' }); // chatbridge_process_cpu_seconds_total, chatbridge_nodejs_heap_size_used_bytes, ...
  const seconds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
  if (gauges) {
    // A store that cannot be read (an outage) makes its gauges NaN, not the scrape fail: the other
    // metrics are wanted most during an outage.
    const read = (count: () => Promise<number>) => count().catch(() => Number.NaN);
    new Gauge({
      name: 'chatbridge_pending_messages',
      help: 'Endpoints with a pending (not yet fully read) message; NaN when the store could not be read.',
      registers: [registry],
      async collect() {
        this.set(await read(() => gauges.pendingMessages()));
      },
    });
    new Gauge({
      name: 'chatbridge_outbox_deliveries',
      help: 'Webhook deliveries waiting in the outbox; NaN when the store could not be read.',
      registers: [registry],
      async collect() {
        this.set(await read(() => gauges.queuedDeliveries()));
      },
    });
  }
  return {
    registry,
    httpRequests: new Counter({
      name: 'chatbridge_http_requests_total',
      help: 'HTTP requests by operationId and status.',
      labelNames: ['operation', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'chatbridge_http_request_duration_seconds',
      help: 'HTTP request latency by operationId.',
      labelNames: ['operation'],
      buckets: seconds,
      registers: [registry],
    }),
    storeDuration: new Histogram({
      name: 'chatbridge_store_operation_duration_seconds',
      help: 'Store call latency by method and result.',
      labelNames: ['method', 'result'],
      buckets: seconds,
      registers: [registry],
    }),
    deliveries: new Counter({
      name: 'chatbridge_webhook_deliveries_total',
      help: 'Webhook deliveries by outcome: an attempt delivered, retried, rejected or given up; superseded: dropped unsent; held: the webhook rate limit paused its queue.',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    expiredMessages: new Counter({
      name: 'chatbridge_expired_messages_total',
      help: 'Copies of messages given up because the message TTL passed before their platform read them (each platform counted).',
      registers: [registry],
    }),
  };
}
