// One decorator of the storage port, so the hot path pays for a single wrapper: it times every call of
// the store's aggregates (metrics, each method named `endpoints.get` and so on) and turns failures
// that mean "the database cannot be reached" into StoreUnavailableError, which the HTTP layer answers
// with 503. Adapters stay free of both concerns. Each method's wrapper and its metric children are
// made once, not on every call. The rate-limit counters are left as they are: they answer from memory
// when their database does not. measureGroupCommits, below, records what a store that groups its
// commits reports of them.
import type { EndpointStore } from '../store/port.ts';
import { StoreUnavailableError, isUnavailable } from '../store/unavailable.ts';
import { createGroupCommitMetrics, type Metrics } from './metrics.ts';

type Method = (...args: unknown[]) => Promise<unknown>;

/** Methods that return an async iterable rather than a promise: passed through as they are, untimed. */
const STREAMING = new Set<string>(['exportRows']);

/** The store with its aggregates' calls timed (their methods named `endpoints.get`, `messages.list` and so on) and `ping` and `close`. */
export function instrumentStore(store: EndpointStore, metrics: Metrics): EndpointStore {
  const own = instrument(store, metrics, '');
  return {
    endpoints: instrument(store.endpoints, metrics, 'endpoints.'),
    bots: instrument(store.bots, metrics, 'bots.'),
    messages: instrument(store.messages, metrics, 'messages.'),
    deliveries: instrument(store.deliveries, metrics, 'deliveries.'),
    changes: instrument(store.changes, metrics, 'changes.'),
    snapshot: instrument(store.snapshot, metrics, 'snapshot.'),
    counters: store.counters,
    inProcess: store.inProcess,
    ...(store.observeGroupCommits && { observeGroupCommits: store.observeGroupCommits.bind(store) }),
    ping: () => own.ping(),
    close: () => own.close(),
  };
}

function instrument<T extends object>(store: T, metrics: Metrics, prefix: string): T {
  const wrappers = new Map<string, Method>();
  const wrap = (property: string, fn: Method): Method => {
    const method = prefix + property;
    const ok = metrics.storeDuration.labels(method, 'ok');
    const unavailable = metrics.storeDuration.labels(method, 'unavailable');
    const error = metrics.storeDuration.labels(method, 'error');
    const failed = (started: number, err: unknown) => {
      const down = method !== 'close' && isUnavailable(err);
      (down ? unavailable : error).observe((performance.now() - started) / 1000);
      throw down ? new StoreUnavailableError(err) : err;
    };
    // One .then per call rather than an async wrapper around an await (two more promises per call).
    return (...args) => {
      const started = performance.now();
      let pending: Promise<unknown>;
      try {
        pending = Promise.resolve(fn.apply(store, args)); // the same promise when it is one
      } catch (err) {
        pending = Promise.reject(err);
      }
      return pending.then(
        (result) => {
          ok.observe((performance.now() - started) / 1000);
          return result;
        },
        (err: unknown) => failed(started, err),
      );
    };
  };
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      if (STREAMING.has(property)) return (value as Method).bind(target);
      let wrapper = wrappers.get(property);
      if (!wrapper) wrappers.set(property, (wrapper = wrap(property, value as Method)));
      return wrapper;
    },
  });
}

/** A store that groups its commits (SQLite) reports each one; the histograms appear only then. */
export function measureGroupCommits(store: EndpointStore, metrics: Metrics): void {
  if (!store.observeGroupCommits) return;
  const { duration, updates } = createGroupCommitMetrics(metrics.registry);
  const statements = duration.labels('statements');
  const commit = duration.labels('commit');
  store.observeGroupCommits((c) => {
    statements.observe(c.statementsMs / 1000);
    commit.observe(c.commitMs / 1000);
    updates.observe(c.updates);
  });
}
