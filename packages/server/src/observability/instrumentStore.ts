// One decorator of the storage port, so the hot path pays for a single wrapper: it times every call
// (metrics) and turns failures that mean "the database cannot be reached" into StoreUnavailableError,
// which the HTTP layer answers with 503. Adapters stay free of both concerns. Each method's wrapper
// and its metric children are made once, not on every call.
import type { EndpointStore } from '../store/port.ts';
import { StoreUnavailableError, isUnavailable } from '../store/unavailable.ts';
import type { Metrics } from './metrics.ts';

type Method = (...args: unknown[]) => Promise<unknown>;

export function instrumentStore(store: EndpointStore, metrics: Metrics): EndpointStore {
  const wrappers = new Map<string, Method>();
  const wrap = (method: string, fn: Method): Method => {
    const ok = metrics.storeDuration.labels(method, 'ok');
    const unavailable = metrics.storeDuration.labels(method, 'unavailable');
    const error = metrics.storeDuration.labels(method, 'error');
    return async (...args) => {
      const started = performance.now();
      try {
        const result = await fn.apply(store, args);
        ok.observe((performance.now() - started) / 1000);
        return result;
      } catch (err) {
        const down = method !== 'close' && isUnavailable(err);
        (down ? unavailable : error).observe((performance.now() - started) / 1000);
        throw down ? new StoreUnavailableError(err) : err;
      }
    };
  };
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      let wrapper = wrappers.get(property);
      if (!wrapper) wrappers.set(property, (wrapper = wrap(property, value as Method)));
      return wrapper;
    },
  });
}
