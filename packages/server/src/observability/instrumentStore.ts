// One decorator of the storage port, so the hot path pays for a single wrapper: it times every call
// (metrics) and turns failures that mean "the database cannot be reached" into StoreUnavailableError,
// which the HTTP layer answers with 503. Adapters stay free of both concerns.
import type { EndpointStore } from '../store/port.ts';
import { StoreUnavailableError, isUnavailable } from '../store/unavailable.ts';
import type { Metrics } from './metrics.ts';

export function instrumentStore(store: EndpointStore, metrics: Metrics): EndpointStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return async (...args: unknown[]) => {
        const end = metrics.storeDuration.startTimer({ method: property });
        try {
          const result = await value.apply(target, args);
          end({ result: 'ok' });
          return result;
        } catch (error) {
          const unavailable = property !== 'close' && isUnavailable(error);
          end({ result: unavailable ? 'unavailable' : 'error' });
          throw unavailable ? new StoreUnavailableError(error) : error;
        }
      };
    },
  });
}
