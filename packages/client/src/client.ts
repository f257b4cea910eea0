// The promise-based client: one method per operationId, resolving to the typed success body and
// rejecting with ChatbridgeError on any non-2xx response.
import { ChatbridgeError, ChatbridgeUsageError } from './errors.ts';
import { type ChangeEvent, type EndpointEvent, type StreamEventsOptions, streamAllEvents, streamEndpointEvents } from './events.ts';
import { rememberMessageNumber } from './messageNumber.ts';
import { createRawClient, type RawClientOptions } from './raw.ts';
import type {
  EndpointPage,
  EndpointRecord,
  Health,
  IssuedToken,
  ListEndpointsParams,
  Platform,
  Readiness,
  UpdateEndpointParams,
  operations,
} from './types.ts';

/** The query types openapi-fetch expects; the params types above also admit `undefined` members. */
type UpdateQuery = Omit<operations['updateEndpoint']['parameters']['query'], 'token'>;
type ListQuery = NonNullable<operations['listEndpoints']['parameters']['query']>;

export interface ChatbridgeClientOptions extends RawClientOptions {
  /** The operator's admin token (`CHATBRIDGE_ADMIN_TOKEN`); needed only by the admin methods. */
  adminToken?: string | undefined;
}

/** Per-call options. */
export interface CallOptions {
  /** Aborts the request; the promise then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** Options of `createEndpoint`. */
export interface CreateEndpointOptions extends CallOptions {
  /**
   * Migrating from the original service only: the endpoint's existing token, so its bots keep working.
   * Left out, the server issues one (what every new endpoint should have).
   */
  token?: string | undefined;
}

/** Options of `markRead`. */
export interface MarkReadOptions extends CallOptions {
  /**
   * The message the bot relayed: `messageNumberOf(record)` of the record it relayed from. When a newer
   * message has replaced it, nothing is marked and the call rejects with a 409 ChatbridgeError.
   */
  messageNumber?: number | undefined;
}

export interface ChatbridgeClient {
  /** `GET /{endpoint}`: reads the endpoint record. */
  getEndpoint(endpoint: string, token: string, options?: CallOptions): Promise<EndpointRecord>;
  /** `POST /update/{endpoint}`: applies `params` atomically and returns the committed record. */
  updateEndpoint(
    endpoint: string,
    token: string,
    params?: UpdateEndpointParams,
    options?: CallOptions,
  ): Promise<EndpointRecord>;
  /** `POST /read/{endpoint}`: marks the pending message read by `platform`; returns the committed record. */
  markRead(endpoint: string, token: string, platform: Platform, options?: MarkReadOptions): Promise<EndpointRecord>;
  /**
   * `GET /events/{endpoint}`: the record's changes as they commit, as Server-Sent Events. Iterate with
   * `for await`: the current record first (or, with `lastEventId`, every change after it), then one
   * event per change. Reconnects by itself, resuming after the last event received, unless
   * `reconnect: false`. Nothing is sent until the iteration starts.
   */
  streamEndpointEvents(endpoint: string, token: string, options?: StreamEventsOptions): AsyncIterable<EndpointEvent>;
  /**
   * `GET /events`: every committed change of every endpoint, in commit order, as Server-Sent Events
   * (admin token). Iterate with `for await`: a `reset` first (the stream starts at the newest
   * position; with `lastEventId`, every change after that position instead), then one `change` per
   * committed change. Reconnects by itself with backoff, resuming after the last event received (no
   * gap, no duplicate), unless `reconnect: false`. Nothing is sent until the iteration starts.
   */
  streamAllEvents(options?: StreamEventsOptions): AsyncIterable<ChangeEvent>;
  /** `POST /admin/endpoints` (admin): creates an endpoint and returns its token, shown only this once. */
  createEndpoint(id: string, options?: CreateEndpointOptions): Promise<IssuedToken>;
  /** `GET /admin/endpoints` (admin): one page of endpoint IDs; pass `next_cursor` as `cursor` for the next. */
  listEndpoints(params?: ListEndpointsParams, options?: CallOptions): Promise<EndpointPage>;
  /** `POST /admin/endpoints/{endpoint}/token` (admin): issues a new token; the old one stops working. */
  rotateEndpointToken(endpoint: string, options?: CallOptions): Promise<IssuedToken>;
  /** `DELETE /admin/endpoints/{endpoint}` (admin): deletes the endpoint and its record. */
  deleteEndpoint(endpoint: string, options?: CallOptions): Promise<void>;
  /** `GET /-/live`: resolves while the server process is serving HTTP. */
  getLiveness(options?: CallOptions): Promise<Health>;
  /**
   * `GET /-/ready`: never rejects for "not ready". A `503` with a Health body resolves with
   * `ready: false`; only other failures (a problem document, another status, a network error) reject.
   */
  getReadiness(options?: CallOptions): Promise<Readiness>;
}

export function createChatbridgeClient(options: ChatbridgeClientOptions): ChatbridgeClient {
  const raw = createRawClient(options);
  const { adminToken } = options;

  // Per-request Authorization header for the admin operations; refuses before sending anything.
  function adminHeaders(operationId: string): { Authorization: string } {
    if (!adminToken) {
      throw new ChatbridgeUsageError(
        `${operationId} is an admin operation: pass adminToken to createChatbridgeClient() to call it`,
      );
    }
    return { Authorization: `Bearer ${adminToken}` };
  }

  return {
    async getEndpoint(endpoint, token, call) {
      const result = await raw.GET('/{endpoint}', {
        params: { path: { endpoint: pathSegment('getEndpoint', endpoint) }, query: wellFormed('getEndpoint', { token }) },
        signal: call?.signal ?? null,
      });
      return rememberMessageNumber(unwrap('getEndpoint', result), result.response);
    },

    async updateEndpoint(endpoint, token, params = {}, call) {
      const result = await raw.POST('/update/{endpoint}', {
        // `token` last, so a stray `token` in params (from untyped callers) cannot override it.
        // Members given as `undefined` are left out of the query by openapi-fetch's serialiser.
        params: { path: { endpoint: pathSegment('updateEndpoint', endpoint) }, query: wellFormed('updateEndpoint', { ...(params as UpdateQuery), token }) },
        signal: call?.signal ?? null,
      });
      return rememberMessageNumber(unwrap('updateEndpoint', result), result.response);
    },

    async markRead(endpoint, token, platform, call) {
      const result = await raw.POST('/read/{endpoint}', {
        params: {
          path: { endpoint: pathSegment('markRead', endpoint) },
          query: wellFormed('markRead', { token, platform, ...(call?.messageNumber !== undefined && { message_number: call.messageNumber }) }),
        },
        signal: call?.signal ?? null,
      });
      return rememberMessageNumber(unwrap('markRead', result), result.response);
    },

    streamEndpointEvents(endpoint, token, options) {
      return streamEndpointEvents(raw, pathSegment('streamEndpointEvents', endpoint), token, options);
    },

    streamAllEvents(options) {
      return streamAllEvents(raw, adminHeaders('streamAllEvents').Authorization, options);
    },

    async createEndpoint(id, call) {
      const result = await raw.POST('/admin/endpoints', {
        body: call?.token === undefined ? { id } : { id, token: call.token },
        headers: adminHeaders('createEndpoint'),
        signal: call?.signal ?? null,
      });
      return unwrap('createEndpoint', result);
    },

    async listEndpoints(params = {}, call) {
      const result = await raw.GET('/admin/endpoints', {
        params: { query: params as ListQuery },
        headers: adminHeaders('listEndpoints'),
        signal: call?.signal ?? null,
      });
      return unwrap('listEndpoints', result);
    },

    async rotateEndpointToken(endpoint, call) {
      const result = await raw.POST('/admin/endpoints/{endpoint}/token', {
        params: { path: { endpoint: pathSegment('rotateEndpointToken', endpoint) } },
        headers: adminHeaders('rotateEndpointToken'),
        signal: call?.signal ?? null,
      });
      return unwrap('rotateEndpointToken', result);
    },

    async deleteEndpoint(endpoint, call) {
      const result = await raw.DELETE('/admin/endpoints/{endpoint}', {
        params: { path: { endpoint: pathSegment('deleteEndpoint', endpoint) } },
        headers: adminHeaders('deleteEndpoint'),
        signal: call?.signal ?? null,
      });
      unwrap('deleteEndpoint', result);
    },

    async getLiveness(call) {
      return unwrap('getLiveness', await raw.GET('/-/live', { signal: call?.signal ?? null }));
    },

    async getReadiness(call) {
      const { data, error, response } = await raw.GET('/-/ready', { signal: call?.signal ?? null });
      if (response.ok) return { ready: true, health: data as Health };
      // The spec's 503 carries a Health body (string `status`), unlike a Problem (numeric `status`).
      if (response.status === 503 && isHealth(error)) return { ready: false, health: error };
      throw ChatbridgeError.fromResponse('getReadiness', response, error);
    },
  };
}

/** Success body of a 2xx response, or a ChatbridgeError built from the error body. */
function unwrap<T>(operationId: string, result: { data?: T; error?: unknown; response: Response }): T {
  // Check the status, not `error`: openapi-fetch leaves `error` undefined for an empty error body.
  if (!result.response.ok) throw ChatbridgeError.fromResponse(operationId, result.response, result.error);
  return result.data as T;
}

/**
 * Path parameters are percent-encoded by openapi-fetch, but `.`, `..` and the empty string survive
 * encoding, and URL resolution would turn them into another path (`deleteEndpoint('..')` would send
 * `DELETE /admin`). Refuse them; every other value is left for the server to validate.
 */
function pathSegment(operationId: string, endpoint: string): string {
  if (endpoint === '' || endpoint === '.' || endpoint === '..') {
    throw new ChatbridgeUsageError(`${operationId}: ${JSON.stringify(endpoint)} is not an endpoint ID`);
  }
  wellFormed(operationId, { endpoint });
  return endpoint;
}

/** Half of a surrogate pair: text cut in the middle of an emoji (`slice` does that), not valid Unicode. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Refuses text that cannot be sent: percent-encoding a lone surrogate throws a bare URIError, which
 * is neither of the errors this client promises. Returns the values unchanged.
 */
function wellFormed<T extends Record<string, unknown>>(operationId: string, values: T): T {
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === 'string' && LONE_SURROGATE.test(value)) {
      throw new ChatbridgeUsageError(`${operationId}: ${name} holds half of a character (a lone UTF-16 surrogate, as from text cut in the middle of an emoji)`);
    }
  }
  return values;
}

function isHealth(body: unknown): body is Health {
  return typeof body === 'object' && body !== null && typeof (body as { status?: unknown }).status === 'string';
}
