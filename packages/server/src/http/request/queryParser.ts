// How Express reads a request's query string: one parser, run once per request.
import { parse as parseQuery } from 'node:querystring';
import express, { type Express, type Request } from 'express';

/**
 * The query parser: no cap on keys (the default of 1000 silently drops the rest, hiding invalid or
 * unknown parameters; the 128 KiB head limit bounds the work), and boolean parameters accepted in any
 * letter case, since Python bots send `True` and `False`.
 */
export function queryParser(booleanParameters: Set<string>): (query: string) => Record<string, unknown> {
  return (query) => {
    const parsed = parseQuery(query, '&', '=', { maxKeys: 0 });
    for (const name in parsed) {
      const value = parsed[name];
      if (typeof value === 'string' && booleanParameters.has(name) && /^(true|false)$/i.test(value)) parsed[name] = value.toLowerCase();
    }
    return parsed;
  };
}

/**
 * Express 5 parses the query string again on every read of `req.query` (a getter on its request
 * prototype); the hygiene check, the credential checks and the validator's parameter step each read
 * it. Here the first read keeps its result as the request's own property, so the query is parsed once
 * and every later reader, the validator's coercion included, sees the same object. Buys, with the
 * credential hashed once: update 325-386 → 171-197 µs CPU (BENCHMARKS.md, de44978).
 */
export function parseQueryOnce(app: Express): void {
  const parse = Object.getOwnPropertyDescriptor(express.request, 'query')?.get;
  if (!parse) throw new Error('express no longer defines request.query as a getter');
  Object.defineProperty(app.request, 'query', {
    configurable: true,
    enumerable: true,
    get(this: Request): unknown {
      const value: unknown = parse.call(this);
      Object.defineProperty(this, 'query', { value, writable: true, enumerable: true, configurable: true });
      return value;
    },
  });
}
