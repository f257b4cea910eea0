// Public entry of @chatbridge/client.
export {
  createChatbridgeClient,
  type BotMarkReadOptions,
  type CallOptions,
  type ChatbridgeBotClient,
  type ChatbridgeBotClientOptions,
  type ChatbridgeCommonMethods,
  type ChatbridgeClient,
  type ChatbridgeClientOptions,
  type CreateEndpointOptions,
  type GetEndpointOptions,
  type MarkReadOptions,
} from './client.ts';
export { messageNumberOf } from './messageNumber.ts';
export { REDACTED_WEBHOOK, isRedactedWebhook } from './redaction.ts';
export { ChatbridgeError, ChatbridgeUsageError } from './errors.ts';
export type {
  ChangeEvent,
  EndpointEvent,
  MessageChangeEvent,
  MessageDeleteEvent,
  MessageEditEvent,
  MessageLogEvent,
  StreamEventsOptions,
} from './events.ts';
export { createRawClient, type ChatbridgeRawClient, type FetchLike, type RawClientOptions } from './raw.ts';
export type {
  Bot,
  IssuedBotKey,
  ChannelMatch,
  components,
  Config,
  Embed,
  EmbedField,
  EndpointPage,
  EditMessageParams,
  EndpointRecord,
  Health,
  IssuedToken,
  ListEndpointsParams,
  ListMessagesParams,
  LoggedMessage,
  LookupResult,
  MessageIds,
  MessagePage,
  MessageRef,
  Message,
  Meta,
  operations,
  paths,
  Platform,
  Problem,
  Readiness,
  RemoveParams,
  UpdateEndpointParams,
  ValidationIssue,
} from './types.ts';
