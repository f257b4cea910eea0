// A decorator of the storage port that times every call: adapters stay free of metrics code.
import type { EndpointStore } from '../store/port.ts';
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
          end({ result: 'error' });
          throw error;
        }
      };
    },
  });
}
