// On a store whose reads cross the network (PostgreSQL), getEndpoint's read of its endpoint starts as
// soon as the request has passed validation, beside the rate limit's counter write instead of after
// it: the two round trips overlap, which keeps a GET's tail latency on PostgreSQL close to SQLite's.
// The read still runs after the request arrived, so it sees every write acknowledged before; a request
// the rate limit refuses wastes one read, nothing more. On SQLite a read is a synchronous lookup in
// memory, so there is nothing to overlap. Buys: PostgreSQL GET 5.4-7.6k → 6.0-8.5k requests/s
// (BENCHMARKS.md, 2013e3d).
import type { Request, RequestHandler } from 'express';
import type { EndpointStore, StoredEndpoint } from '../../store/port.ts';
import { openapiOf, pathParam } from '../operations.ts';

/**
 * The read started ahead, kept on the request itself and cleared when taken: a WeakMap keyed by the
 * request keeps rows alive longer, and V8 promotes more of each GET to its old generation (with the
 * rows' own release: 1.9 → 1.2 KB promoted per GET, BENCHMARKS.md, 08d22c5).
 */
const READ = Symbol('chatbridge.readAhead');
type WithRead = Request & { [READ]?: Promise<StoredEndpoint | undefined> | undefined };

export function readAhead(store: EndpointStore): RequestHandler {
  return (req, _res, next) => {
    if (openapiOf(req).schema?.operationId === 'getEndpoint') {
      const read = store.endpoints.get(pathParam(req, 'endpoint'));
      read.catch(() => undefined); // refused by the rate limit: nobody awaits it, and that is fine
      (req as WithRead)[READ] = read;
    }
    next();
  };
}

/** The endpoint of the request's path: the read started ahead, else a read now. */
export function readEndpoint(req: Request, store: EndpointStore): Promise<StoredEndpoint | undefined> {
  const read = (req as WithRead)[READ];
  if (read === undefined) return store.endpoints.get(pathParam(req, 'endpoint'));
  (req as WithRead)[READ] = undefined;
  return read;
}
