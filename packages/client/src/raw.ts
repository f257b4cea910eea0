// The plain openapi-fetch client, typed with the generated `paths`, for callers who want
// middleware, `parseAs`, or the `{ data, error, response }` results instead of exceptions.
import createClient, { type Client, type HeadersOptions } from 'openapi-fetch';
import type { paths } from '@chatbridge/api';

/** Anything that can stand in for `fetch`; the global `fetch` fits. Only ever called with a `Request`. */
export type FetchLike = (input: Request) => Promise<Response>;

export interface RawClientOptions {
  /** Server root, e.g. `http://127.0.0.1:8080` (a trailing slash is ignored). */
  baseUrl: string;
  /** Injected fetch; defaults to the global `fetch`. Globals are never patched. */
  fetch?: FetchLike | undefined;
  /** Headers sent with every request. */
  headers?: HeadersOptions | undefined;
}

export type ChatbridgeRawClient = Client<paths>;

/**
 * Creates an openapi-fetch client for the chatbridge API. Query values are serialised by openapi-fetch's
 * default serializer, which percent-encodes them with `encodeURIComponent` (so `+` becomes `%2B` and a
 * space `%20`, and both round-trip exactly).
 */
export function createRawClient(options: RawClientOptions): ChatbridgeRawClient {
  const { baseUrl, fetch, headers } = options;
  return createClient<paths>({ baseUrl, ...(fetch && { fetch }), ...(headers && { headers }) });
}
