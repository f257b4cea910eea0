// On a store whose reads cross the network (PostgreSQL), getEndpoint's read of its endpoint starts as soon as the
// request has passed validation, beside the rate limit's counter write instead of after it: the two
// round trips overlap. In the benchmark, done one after the other they put the p99 of a GET on
// PostgreSQL at 2.3-2.4 times SQLite's. The read still runs after the request arrived, so it sees
// every write acknowledged before; a request the rate limit refuses wastes one read, nothing more.
// On SQLite a read is a synchronous lookup in memory, so there is nothing to overlap.
import type { Request, RequestHandler } from 'express';
import type { EndpointStore, StoredEndpoint } from '../store/port.ts';
import { openapiOf, pathParam } from './operations.ts';

/**
 * The read started ahead, on the request itself and cleared when taken, not in a WeakMap keyed by the
 * request. Measured with the rate limiter's fresh map per turn: a GET promotes 1.2 KB to V8's old
 * generation instead of 1.9 (BENCHMARKS.md, twenty-first pass); why the WeakMap kept rows alive
 * longer is V8's, not pinned down.
 */
const READ = Symbol('chatbridge.readAhead');
type WithRead = Request & { [READ]?: Promise<StoredEndpoint | undefined> | undefined };

export function readAhead(store: EndpointStore): RequestHandler {
  return (req, _res, next) => {
    if (openapiOf(req).schema?.operationId === 'getEndpoint') {
      const read = store.get(pathParam(req, 'endpoint'));
      read.catch(() => undefined); // refused by the rate limit: nobody awaits it, and that is fine
      (req as WithRead)[READ] = read;
    }
    next();
  };
}

/** The endpoint of the request's path: the read started ahead, else a read now. */
export function readEndpoint(req: Request, store: EndpointStore): Promise<StoredEndpoint | undefined> {
  const read = (req as WithRead)[READ];
  if (read === undefined) return store.get(pathParam(req, 'endpoint'));
  (req as WithRead)[READ] = undefined;
  return read;
}
