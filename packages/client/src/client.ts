// The promise-based client: one method per operationId, resolving to the typed success body and
// rejecting with ChatbridgeError on any non-2xx response.
import { ChatbridgeError, ChatbridgeUsageError } from './errors.ts';
import {
  type ChangeEvent,
  type EndpointEvent,
  type MessageChangeEvent,
  type MessageLogEvent,
  type RecordCredential,
  type StreamEventsOptions,
  streamAllEvents,
  streamEndpointEvents,
} from './events.ts';
import { rememberMessageNumber } from './messageNumber.ts';
import { createRawClient, type RawClientOptions } from './raw.ts';
import type {
  Bot,
  BotList,
  EndpointPage,
  EndpointRecord,
  Health,
  IssuedBotKey,
  IssuedToken,
  EditMessageParams,
  ListEndpointsParams,
  ListMessagesParams,
  LoggedMessage,
  LookupResult,
  MessagePage,
  MessageRef,
  Platform,
  Readiness,
  RemoveParams,
  UpdateEndpointParams,
  operations,
} from './types.ts';

/** The query types openapi-fetch expects; the params types above also admit `undefined` members. */
type UpdateQuery = Omit<NonNullable<operations['updateEndpoint']['parameters']['query']>, 'token'>;
type ListQuery = NonNullable<operations['listEndpoints']['parameters']['query']>;
type RemoveQuery = Omit<NonNullable<operations['removeFromEndpoint']['parameters']['query']>, 'token'>;

/** Stream options that leave message events out: every event yielded carries a record. */
type RecordsOnly = StreamEventsOptions & { messageEvents?: false | undefined };

export interface ChatbridgeClientOptions extends RawClientOptions {
  /** The operator's admin token (`CHATBRIDGE_ADMIN_TOKEN`); needed only by the admin methods. */
  adminToken?: string | undefined;
}

export interface ChatbridgeBotClientOptions extends ChatbridgeClientOptions {
  /**
   * A bot key (`cbk_...`, from `createBot`): the record methods then take no token and send
   * `Authorization: Bearer <key>` instead, acting as the key's platform on the endpoints where that
   * platform has a channel (see ChatbridgeBotClient).
   */
  botKey: string;
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
export interface GetEndpointOptions extends CallOptions {
  /**
   * The platform reading: `meta` shows the oldest message it has not read (a bot key's platform is
   * the default, and the only one it may name).
   */
  platform?: Platform;
}

export interface MarkReadOptions extends CallOptions {
  /**
   * The message the bot relayed: `messageNumberOf(record)` of the record it relayed from, or the
   * `messageNumber` of the stream event it relayed from. When a newer
   * message has replaced it, nothing is marked and the call rejects with a 409 ChatbridgeError.
   */
  messageNumber?: number | undefined;
  /**
   * The ID of the copy the bot posted (1 to 100 printable ASCII characters), recorded as its
   * platform's ID of the message, so that edits, deletes and replies reach that copy. Only with
   * `messageNumber` (the server answers 400 otherwise); an ID another message already has on that
   * platform rejects with a 409 ChatbridgeError (`duplicate-message-id`).
   */
  messageId?: string | undefined;
}

/** Options of a bot client's `markRead`. */
export interface BotMarkReadOptions extends MarkReadOptions {
  /** The platform that read the message; defaults to the key's own (another one is answered 403). */
  platform?: Platform | undefined;
}

/** The methods every client has: the admin and health operations. */
export interface ChatbridgeCommonMethods {
  /** `POST /admin/endpoints` (admin): creates an endpoint and returns its token, shown only this once. */
  createEndpoint(id: string, options?: CreateEndpointOptions): Promise<IssuedToken>;
  /** `GET /admin/endpoints` (admin): one page of endpoint IDs; pass `next_cursor` as `cursor` for the next. */
  listEndpoints(params?: ListEndpointsParams, options?: CallOptions): Promise<EndpointPage>;
  /** `POST /admin/endpoints/{endpoint}/token` (admin): issues a new token; the old one stops working. */
  rotateEndpointToken(endpoint: string, options?: CallOptions): Promise<IssuedToken>;
  /** `DELETE /admin/endpoints/{endpoint}` (admin): deletes the endpoint and its record. */
  deleteEndpoint(endpoint: string, options?: CallOptions): Promise<void>;
  /** `POST /admin/bots` (admin): creates a bot acting for `platform`; its key is shown only this once. */
  createBot(id: string, platform: Platform, options?: CallOptions): Promise<IssuedBotKey>;
  /** `GET /admin/bots` (admin): every bot and its platform, never a key. */
  listBots(options?: CallOptions): Promise<Bot[]>;
  /** `POST /admin/bots/{bot}/key` (admin): issues a new key; the old one stops working and its streams end. */
  rotateBotKey(id: string, options?: CallOptions): Promise<IssuedBotKey>;
  /** `DELETE /admin/bots/{bot}` (admin): deletes the bot; its key stops working and its streams end. */
  deleteBot(id: string, options?: CallOptions): Promise<void>;
  /** `GET /-/live`: resolves while the server process is serving HTTP. */
  getLiveness(options?: CallOptions): Promise<Health>;
  /**
   * `GET /-/ready`: never rejects for "not ready". A `503` with a Health body resolves with
   * `ready: false`; only other failures (a problem document, another status, a network error) reject.
   */
  getReadiness(options?: CallOptions): Promise<Readiness>;
}

/**
 * The client made with a `botKey`: the record methods take no token. The key acts as its platform,
 * and only on endpoints where that platform has a channel (elsewhere every call fails with 401, as
 * with a wrong token). There it changes only its platform's channels, log channel and webhooks, its
 * own messages and its read flag; anything else fails with 403, `error.problem.errors` naming each
 * parameter. Records it reads show other platforms' webhook URLs as REDACTED_WEBHOOK.
 */
export interface ChatbridgeBotClient extends ChatbridgeCommonMethods {
  /** `GET /{endpoint}` with the bot key: `meta` shows the oldest message the key's platform has not read. */
  getEndpoint(endpoint: string, options?: GetEndpointOptions): Promise<EndpointRecord>;
  /** `GET /messages/{endpoint}` with the bot key: the message log after `after` (see ChatbridgeClient.listMessages). */
  listMessages(endpoint: string, params?: ListMessagesParams, options?: CallOptions): Promise<MessagePage>;
  /** `POST /update/{endpoint}` with the bot key. */
  updateEndpoint(endpoint: string, params?: UpdateEndpointParams, options?: CallOptions): Promise<EndpointRecord>;
  /** `POST /remove/{endpoint}` with the bot key (see ChatbridgeClient.remove). */
  remove(endpoint: string, params: RemoveParams, options?: CallOptions): Promise<EndpointRecord>;
  /** `GET /lookup` with the bot key: the endpoints where the key's platform takes part whose channels of `platform` hold `channel`. */
  lookup(platform: Platform, channel: string, options?: CallOptions): Promise<LookupResult>;
  /** `POST /read/{endpoint}` with the bot key: marks the pending message read by the key's platform. */
  markRead(endpoint: string, options?: BotMarkReadOptions): Promise<EndpointRecord>;
  /** `GET /messages/{endpoint}/find` with the bot key: any message of an endpoint where its platform takes part (see ChatbridgeClient.getMessage). */
  getMessage(endpoint: string, message: MessageRef, options?: CallOptions): Promise<LoggedMessage>;
  /** `POST /messages/{endpoint}/edit` with the bot key: only a message its own platform sent (403 otherwise; see ChatbridgeClient.editMessage). */
  editMessage(endpoint: string, message: MessageRef, params: EditMessageParams, options?: CallOptions): Promise<LoggedMessage>;
  /** `POST /messages/{endpoint}/delete` with the bot key: only a message its own platform sent (403 otherwise; see ChatbridgeClient.deleteMessage). */
  deleteMessage(endpoint: string, message: MessageRef, options?: CallOptions): Promise<LoggedMessage>;
  /** `GET /events/{endpoint}` with the bot key (see ChatbridgeClient.streamEndpointEvents). */
  streamEndpointEvents(endpoint: string, options?: RecordsOnly): AsyncIterable<EndpointEvent>;
  streamEndpointEvents(endpoint: string, options: StreamEventsOptions): AsyncIterable<EndpointEvent | MessageLogEvent>;
  /** `GET /events` with the bot key: every change of the endpoints where its platform takes part (see ChatbridgeClient.streamAllEvents). */
  streamAllEvents(options?: RecordsOnly): AsyncIterable<ChangeEvent>;
  streamAllEvents(options: StreamEventsOptions): AsyncIterable<ChangeEvent | MessageChangeEvent>;
}

export interface ChatbridgeClient extends ChatbridgeCommonMethods {
  /**
   * `GET /{endpoint}`: reads the endpoint record; with `platform`, `meta` shows the oldest message that
   * platform has not read (otherwise the oldest some platform has not read).
   */
  getEndpoint(endpoint: string, token: string, options?: GetEndpointOptions): Promise<EndpointRecord>;
  /**
   * `GET /messages/{endpoint}`: the message log after `after` (default 0), oldest first, at most
   * `limit`; with `platform`, only what that platform has not read. `more` says whether to ask again
   * with `after` set to the last number listed.
   */
  listMessages(endpoint: string, token: string, params?: ListMessagesParams, options?: CallOptions): Promise<MessagePage>;
  /** `POST /update/{endpoint}`: applies `params` atomically and returns the committed record. */
  updateEndpoint(endpoint: string, token: string, params?: UpdateEndpointParams, options?: CallOptions): Promise<EndpointRecord>;
  /**
   * `POST /remove/{endpoint}`: removes blacklist words, allowed IDs, a bridge (a position of every
   * platform's channels and webhooks) or log channels, atomically; returns the committed record.
   */
  remove(endpoint: string, token: string, params: RemoveParams, options?: CallOptions): Promise<EndpointRecord>;
  /**
   * `GET /lookup` (admin token; a bot client uses its key): the endpoints whose channels of `platform` hold `channel`, and the
   * bridge it stands at; `matches` is empty when none does.
   */
  lookup(platform: Platform, channel: string, options?: CallOptions): Promise<LookupResult>;
  /** `POST /read/{endpoint}`: marks the pending message read by `platform`; returns the committed record. */
  markRead(endpoint: string, token: string, platform: Platform, options?: MarkReadOptions): Promise<EndpointRecord>;
  /**
   * `GET /messages/{endpoint}/find`: one message of the log, named by its number or by its ID on a
   * platform, with its ID on every platform the service knows. Rejects with a 404 ChatbridgeError
   * (`no-such-message`) when the log does not keep it.
   */
  getMessage(endpoint: string, token: string, message: MessageRef, options?: CallOptions): Promise<LoggedMessage>;
  /**
   * `POST /messages/{endpoint}/edit`: replaces the message's text (and its attachments or embed, when
   * given); every platform hears of it (`edit` events, and the webhook copies of a `selfuse` endpoint
   * are edited). Resolves with the message as edited. A deleted message, or one edited 100 times,
   * rejects with a 409 ChatbridgeError.
   */
  editMessage(
    endpoint: string,
    token: string,
    message: MessageRef,
    params: EditMessageParams,
    options?: CallOptions,
  ): Promise<LoggedMessage>;
  /**
   * `POST /messages/{endpoint}/delete`: deletes the message everywhere (`delete` events, webhook
   * copies deleted, not delivered where it was not yet). Resolves with the message, `deleted: true`;
   * deleting it again resolves the same and changes nothing.
   */
  deleteMessage(endpoint: string, token: string, message: MessageRef, options?: CallOptions): Promise<LoggedMessage>;
  /**
   * `GET /events/{endpoint}`: the record's changes as they commit, as Server-Sent Events. Iterate with
   * `for await`: the current record first (or, with `lastEventId`, every change after it), then one
   * event per change. Reconnects by itself, resuming after the last event received, unless
   * `reconnect: false`. Nothing is sent until the iteration starts. With `messageEvents: true`, edits
   * and deletes of messages come too, as `MessageEditEvent` and `MessageDeleteEvent` (tell them apart
   * by `type`).
   */
  streamEndpointEvents(endpoint: string, token: string, options?: RecordsOnly): AsyncIterable<EndpointEvent>;
  streamEndpointEvents(endpoint: string, token: string, options: StreamEventsOptions): AsyncIterable<EndpointEvent | MessageLogEvent>;
  /**
   * `GET /events` (admin token; a bot client uses its key): every committed change of every endpoint,
   * in commit order, as Server-Sent Events. Iterate with `for await`: a `reset` first (the stream
   * starts at the newest position; with `lastEventId`, every change after that position instead),
   * then one `change` per committed change, each naming its endpoint, version and message number.
   * Reconnects by itself with backoff, resuming after the last event received (no gap, no
   * duplicate), unless `reconnect: false`. Nothing is sent until the iteration starts. With
   * `messageEvents: true`, edits and deletes of messages come too, as `MessageChangeEvent`s.
   */
  streamAllEvents(options?: RecordsOnly): AsyncIterable<ChangeEvent>;
  streamAllEvents(options: StreamEventsOptions): AsyncIterable<ChangeEvent | MessageChangeEvent>;
}

/** With `botKey`, the record methods authenticate with it and take no token (ChatbridgeBotClient). */
export function createChatbridgeClient(options: ChatbridgeBotClientOptions): ChatbridgeBotClient;
export function createChatbridgeClient(options: ChatbridgeClientOptions): ChatbridgeClient;
export function createChatbridgeClient(
  options: ChatbridgeClientOptions | ChatbridgeBotClientOptions,
): ChatbridgeClient | ChatbridgeBotClient {
  const raw = createRawClient(options);
  const { adminToken } = options;
  const botKey = 'botKey' in options ? options.botKey : undefined;

  /** The credential's part of a record request: the `token` query member, or the Authorization header. */
  const authOf = (credential: RecordCredential) =>
    'token' in credential
      ? { query: { token: credential.token }, headers: {} }
      : { query: {}, headers: { Authorization: `Bearer ${credential.botKey}` } };

  const record = {
    async getEndpoint(endpoint: string, credential: RecordCredential, call?: GetEndpointOptions) {
      const auth = authOf(credential);
      const query = { ...auth.query, ...(call?.platform !== undefined && { platform: call.platform }) };
      const result = await raw.GET('/{endpoint}', {
        params: { path: { endpoint: pathSegment('getEndpoint', endpoint) }, query: wellFormed('getEndpoint', query) },
        headers: auth.headers,
        signal: call?.signal ?? null,
      });
      return rememberMessageNumber(unwrap('getEndpoint', result), result.response);
    },

    async updateEndpoint(endpoint: string, credential: RecordCredential, params: UpdateEndpointParams = {}, call?: CallOptions) {
      const auth = authOf(credential);
      // Without a token, a stray `token` in params (from untyped callers) is dropped: a bot client never sends one.
      const { token: _stray, ...rest } = params as UpdateQuery & { token?: unknown };
      const result = await raw.POST('/update/{endpoint}', {
        // `token` last, so a stray `token` in params (from untyped callers) cannot override it.
        // Members given as `undefined` are left out of the query by openapi-fetch's serialiser.
        params: {
          path: { endpoint: pathSegment('updateEndpoint', endpoint) },
          query: wellFormed('updateEndpoint', { ...(rest as UpdateQuery), ...auth.query }),
        },
        headers: auth.headers,
        signal: call?.signal ?? null,
      });
      return rememberMessageNumber(unwrap('updateEndpoint', result), result.response);
    },

    async listMessages(endpoint: string, credential: RecordCredential, params: ListMessagesParams = {}, call?: CallOptions) {
      const auth = authOf(credential);
      const { after, limit, platform } = params;
      const result = await raw.GET('/messages/{endpoint}', {
        params: {
          path: { endpoint: pathSegment('listMessages', endpoint) },
          query: {
            ...auth.query,
            ...(after !== undefined && { after }),
            ...(limit !== undefined && { limit }),
            ...(platform !== undefined && { platform }),
          },
        },
        headers: auth.headers,
        signal: call?.signal ?? null,
      });
      return unwrap('listMessages', result);
    },

    async remove(endpoint: string, credential: RecordCredential, params: RemoveParams, call?: CallOptions) {
      const auth = authOf(credential);
      const { token: _stray, ...rest } = params as RemoveQuery & { token?: unknown };
      const result = await raw.POST('/remove/{endpoint}', {
        params: {
          path: { endpoint: pathSegment('remove', endpoint) },
          query: wellFormed('remove', { ...(rest as RemoveQuery), ...auth.query }),
        },
        headers: auth.headers,
        signal: call?.signal ?? null,
      });
      return rememberMessageNumber(unwrap('removeFromEndpoint', result), result.response);
    },

    async lookup(platform: Platform, channel: string, authorization: { Authorization: string }, call?: CallOptions) {
      const result = await raw.GET('/lookup', {
        params: { query: wellFormed('lookup', { platform, channel }) },
        headers: authorization,
        signal: call?.signal ?? null,
      });
      return unwrap('lookupEndpoints', result);
    },

    async markRead(endpoint: string, credential: RecordCredential, platform: Platform | undefined, call?: MarkReadOptions) {
      const auth = authOf(credential);
      const result = await raw.POST('/read/{endpoint}', {
        params: {
          path: { endpoint: pathSegment('markRead', endpoint) },
          query: wellFormed('markRead', {
            ...auth.query,
            ...(platform !== undefined && { platform }),
            ...(call?.messageNumber !== undefined && { message_number: call.messageNumber }),
            ...(call?.messageId !== undefined && { message_id: call.messageId }),
          }),
        },
        headers: auth.headers,
        signal: call?.signal ?? null,
      });
      return rememberMessageNumber(unwrap('markRead', result), result.response);
    },

    async getMessage(endpoint: string, credential: RecordCredential, message: MessageRef, call?: CallOptions) {
      const auth = authOf(credential);
      const result = await raw.GET('/messages/{endpoint}/find', {
        params: {
          path: { endpoint: pathSegment('getMessage', endpoint) },
          query: wellFormed('getMessage', { ...messageQuery(message), ...auth.query }),
        },
        headers: auth.headers,
        signal: call?.signal ?? null,
      });
      return unwrap('getMessage', result);
    },

    async editMessage(endpoint: string, credential: RecordCredential, message: MessageRef, params: EditMessageParams, call?: CallOptions) {
      const auth = authOf(credential);
      const { message_content, message_attachments, message_embed } = params;
      const result = await raw.POST('/messages/{endpoint}/edit', {
        params: {
          path: { endpoint: pathSegment('editMessage', endpoint) },
          query: wellFormed('editMessage', {
            ...messageQuery(message),
            ...(message_content !== undefined && { message_content }),
            ...(message_attachments !== undefined && { message_attachments }),
            ...(message_embed !== undefined && { message_embed }),
            ...auth.query,
          }),
        },
        headers: auth.headers,
        signal: call?.signal ?? null,
      });
      return unwrap('editMessage', result);
    },

    async deleteMessage(endpoint: string, credential: RecordCredential, message: MessageRef, call?: CallOptions) {
      const auth = authOf(credential);
      const result = await raw.POST('/messages/{endpoint}/delete', {
        params: {
          path: { endpoint: pathSegment('deleteMessage', endpoint) },
          query: wellFormed('deleteMessage', { ...messageQuery(message), ...auth.query }),
        },
        headers: auth.headers,
        signal: call?.signal ?? null,
      });
      return unwrap('deleteMessage', result);
    },
  };

  // Per-request Authorization header for the admin operations; refuses before sending anything.
  function adminHeaders(operationId: string): { Authorization: string } {
    if (!adminToken) {
      throw new ChatbridgeUsageError(`${operationId} is an admin operation: pass adminToken to createChatbridgeClient() to call it`);
    }
    return { Authorization: `Bearer ${adminToken}` };
  }

  const common: ChatbridgeCommonMethods = {
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

    async createBot(id, platform, call) {
      const result = await raw.POST('/admin/bots', {
        body: { id, platform },
        headers: adminHeaders('createBot'),
        signal: call?.signal ?? null,
      });
      return unwrap('createBot', result);
    },

    async listBots(call) {
      const result = await raw.GET('/admin/bots', { headers: adminHeaders('listBots'), signal: call?.signal ?? null });
      return (unwrap('listBots', result) as BotList).bots;
    },

    async rotateBotKey(id, call) {
      const result = await raw.POST('/admin/bots/{bot}/key', {
        params: { path: { bot: pathSegment('rotateBotKey', id) } },
        headers: adminHeaders('rotateBotKey'),
        signal: call?.signal ?? null,
      });
      return unwrap('rotateBotKey', result);
    },

    async deleteBot(id, call) {
      const result = await raw.DELETE('/admin/bots/{bot}', {
        params: { path: { bot: pathSegment('deleteBot', id) } },
        headers: adminHeaders('deleteBot'),
        signal: call?.signal ?? null,
      });
      unwrap('deleteBot', result);
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

  if (botKey !== undefined) {
    const key = { botKey };
    const botClient: ChatbridgeBotClient = {
      ...common,
      getEndpoint: (endpoint, call) => record.getEndpoint(endpoint, key, call),
      listMessages: (endpoint, params, call) => record.listMessages(endpoint, key, params, call),
      updateEndpoint: (endpoint, params, call) => record.updateEndpoint(endpoint, key, params, call),
      remove: (endpoint, params, call) => record.remove(endpoint, key, params, call),
      lookup: (platform, channel, call) => record.lookup(platform, channel, { Authorization: `Bearer ${botKey}` }, call),
      markRead: (endpoint, call) => record.markRead(endpoint, key, call?.platform, call),
      getMessage: (endpoint, message, call) => record.getMessage(endpoint, key, message, call),
      editMessage: (endpoint, message, params, call) => record.editMessage(endpoint, key, message, params, call),
      deleteMessage: (endpoint, message, call) => record.deleteMessage(endpoint, key, message, call),
      // Which events come is decided at run time by `messageEvents`; the overloads type each choice.
      streamEndpointEvents: ((endpoint: string, streamOptions?: StreamEventsOptions) =>
        streamEndpointEvents(
          raw,
          pathSegment('streamEndpointEvents', endpoint),
          key,
          streamOptions,
        )) as ChatbridgeBotClient['streamEndpointEvents'],
      streamAllEvents: ((streamOptions?: StreamEventsOptions) =>
        streamAllEvents(raw, `Bearer ${botKey}`, streamOptions)) as ChatbridgeBotClient['streamAllEvents'],
    };
    return botClient;
  }
  const tokenClient: ChatbridgeClient = {
    ...common,
    getEndpoint: (endpoint, token, call) => record.getEndpoint(endpoint, { token }, call),
    listMessages: (endpoint, token, params, call) => record.listMessages(endpoint, { token }, params, call),
    updateEndpoint: (endpoint, token, params, call) => record.updateEndpoint(endpoint, { token }, params, call),
    remove: (endpoint, token, params, call) => record.remove(endpoint, { token }, params, call),
    lookup: async (platform, channel, call) => record.lookup(platform, channel, adminHeaders('lookup'), call),
    markRead: (endpoint, token, platform, call) => record.markRead(endpoint, { token }, platform, call),
    getMessage: (endpoint, token, message, call) => record.getMessage(endpoint, { token }, message, call),
    editMessage: (endpoint, token, message, params, call) => record.editMessage(endpoint, { token }, message, params, call),
    deleteMessage: (endpoint, token, message, call) => record.deleteMessage(endpoint, { token }, message, call),
    // Which events come is decided at run time by `messageEvents`; the overloads type each choice.
    streamEndpointEvents: ((endpoint: string, token: string, streamOptions?: StreamEventsOptions) =>
      streamEndpointEvents(
        raw,
        pathSegment('streamEndpointEvents', endpoint),
        { token },
        streamOptions,
      )) as ChatbridgeClient['streamEndpointEvents'],
    streamAllEvents: ((streamOptions?: StreamEventsOptions) =>
      streamAllEvents(raw, adminHeaders('streamAllEvents').Authorization, streamOptions)) as ChatbridgeClient['streamAllEvents'],
  };
  return tokenClient;
}

/**
 * The query members that name a message: `number`, or `platform` and `message_id`. Whatever an untyped
 * caller gave is sent as given, so a mix is answered by the server (400 naming the parameters), never
 * silently resolved here.
 */
function messageQuery(message: MessageRef): { number?: number; platform?: Platform; message_id?: string } {
  const { number, platform, messageId } = message as { number?: number; platform?: Platform; messageId?: string };
  return {
    ...(number !== undefined && { number }),
    ...(platform !== undefined && { platform }),
    ...(messageId !== undefined && { message_id: messageId }),
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
      throw new ChatbridgeUsageError(
        `${operationId}: ${name} holds half of a character (a lone UTF-16 surrogate, as from text cut in the middle of an emoji)`,
      );
    }
  }
  return values;
}

function isHealth(body: unknown): body is Health {
  return typeof body === 'object' && body !== null && typeof (body as { status?: unknown }).status === 'string';
}
