// Friendly names for the generated OpenAPI types, so callers never index into `components`.
import type { components, operations } from '@chatbridge/api';

export type { components, operations, paths } from '@chatbridge/api';

type Schemas = components['schemas'];

export type EndpointRecord = Schemas['EndpointRecord'];
export type Config = Schemas['Config'];
export type Meta = Schemas['Meta'];
export type Message = Schemas['Message'];
export type Embed = Schemas['Embed'];
export type EmbedField = Schemas['EmbedField'];
export type Platform = Schemas['Platform'];
export type Problem = Schemas['Problem'];
export type ValidationIssue = Schemas['ValidationIssue'];
export type IssuedToken = Schemas['IssuedToken'];
export type EndpointPage = Schemas['EndpointPage'];
export type Health = Schemas['Health'];
export type Bot = Schemas['Bot'];
export type BotList = Schemas['BotList'];
export type IssuedBotKey = Schemas['IssuedBotKey'];
export type LookupResult = Schemas['LookupResult'];
export type MessagePage = Schemas['MessagePage'];
export type LoggedMessage = Schemas['LoggedMessage'];
/** A message's ID on each platform the service knows it for (`{}` when none). */
export type MessageIds = Schemas['MessageIds'];
export type ChannelMatch = Schemas['ChannelMatch'];

/**
 * Every member optional and also open to `undefined` (left out of the query), so that code compiled
 * with `exactOptionalPropertyTypes` can pass a value that may be unset.
 */
type Optional<T> = { [K in keyof T]?: T[K] | undefined };

/**
 * Query parameters of `updateEndpoint`, without `token` (the client passes that separately), and
 * without `webhook_chat_c`/`webhook_chat_d`: the spec keeps them for bots that send them, but the
 * server ignores them (those platforms have no webhooks).
 */
export type UpdateEndpointParams = Optional<
  Omit<NonNullable<operations['updateEndpoint']['parameters']['query']>, 'token' | 'webhook_chat_c' | 'webhook_chat_d'>
>;

/** Query parameters of `remove` (`removeFromEndpoint`), without `token` (the client passes that separately). */
export type RemoveParams = Optional<Omit<NonNullable<operations['removeFromEndpoint']['parameters']['query']>, 'token'>>;

/** Query parameters of `listEndpoints`. */
export type ListEndpointsParams = Optional<NonNullable<operations['listEndpoints']['parameters']['query']>>;
/** `listMessages`' query: `after`, `limit`, `platform` (only what that platform has not read). */
export type ListMessagesParams = Optional<Omit<NonNullable<operations['listMessages']['parameters']['query']>, 'token'>>;

/**
 * A message of the log, named one of the two ways `getMessage`, `editMessage` and `deleteMessage`
 * take: by its number, or by its ID on a platform (the sender's own, or any copy's). Mixing the two
 * does not compile (the server would answer 400).
 */
export type MessageRef =
  | { number: number; platform?: never; messageId?: never }
  | { platform: Platform; messageId: string; number?: never };

/**
 * The new version of an edited message (`editMessage`): `message_content` replaces the text,
 * `message_attachments` and `message_embed` replace those when given. At least one is needed (the
 * server answers 400 otherwise).
 */
export type EditMessageParams = Optional<
  Pick<NonNullable<operations['editMessage']['parameters']['query']>, 'message_content' | 'message_attachments' | 'message_embed'>
>;

/**
 * What `getReadiness` resolves with: `ready` is `true` on `200` and `false` on a `503` that carries
 * a Health body; `health` is that body (see `health.checks` for the reason).
 */
export interface Readiness {
  ready: boolean;
  health: Health;
}
