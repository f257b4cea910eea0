// One decorator of the storage port, so the hot path pays for a single wrapper: it times every call
// (metrics) and turns failures that mean "the database cannot be reached" into StoreUnavailableError,
// which the HTTP layer answers with 503. Adapters stay free of both concerns. Each method's wrapper
// and its metric children are made once, not on every call. measureGroupCommits, below, records what
// a store that groups its commits reports of them.
import type { EndpointStore } from '../store/port.ts';
import { StoreUnavailableError, isUnavailable } from '../store/unavailable.ts';
import { createGroupCommitMetrics, type Metrics } from './metrics.ts';

type Method = (...args: unknown[]) => Promise<unknown>;

/** Methods that return an async iterable rather than a promise: passed through as they are, untimed. */
const STREAMING = new Set<string>(['exportRows']);

export function instrumentStore(store: EndpointStore, metrics: Metrics): EndpointStore {
  return instrument(store, metrics, '');
}

/** The aggregates a store carries (its message log) are instrumented alike, their methods named `messages.list` and so on. */
const AGGREGATES = new Set<string>(['messages']);

function instrument<T extends object>(store: T, metrics: Metrics, prefix: string): T {
  const wrappers = new Map<string, Method>();
  const aggregates = new Map<string, object>();
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
      if (typeof property === 'string' && AGGREGATES.has(property) && typeof value === 'object' && value !== null) {
        let aggregate = aggregates.get(property);
        if (!aggregate) aggregates.set(property, (aggregate = instrument(value, metrics, `${property}.`)));
        return aggregate;
      }
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
