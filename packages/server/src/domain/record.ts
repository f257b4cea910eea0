import type { components } from '@chatbridge/api';

export type EndpointRecord = components['schemas']['EndpointRecord'];
export type Config = components['schemas']['Config'];
export type Meta = components['schemas']['Meta'];
export type Message = components['schemas']['Message'];
export type Embed = components['schemas']['Embed'];
export type EmbedField = components['schemas']['EmbedField'];
export type Platform = components['schemas']['Platform'];

export const PLATFORMS = ['chat_a', 'chat_b', 'chat_c', 'chat_d'] as const satisfies readonly Platform[];
/** Only these platforms support webhooks; the others' webhook lists stay empty. */
export const WEBHOOK_PLATFORMS = ['chat_a', 'chat_b'] as const satisfies readonly Platform[];

/** The text the original service stored in empty embed members; bots compare against it. */
export const EMBED_NONE = 'None';

export const LIST_LIMITS = { perPlatform: 50, blacklist: 1000, allowedIds: 500 } as const;

const perPlatform = <T>(make: () => T): Record<Platform, T> => ({
  chat_a: make(),
  chat_b: make(),
  chat_c: make(),
  chat_d: make(),
});

export function emptyEmbed(): Embed {
  return { description: EMBED_NONE, fields: [], footer: EMBED_NONE, image: EMBED_NONE, thumbnail: EMBED_NONE, title: EMBED_NONE };
}

export function emptyMessage(): Message {
  return {
    attachments: [],
    author: { avatar: null, id: null, name: null },
    content: null,
    embed: emptyEmbed(),
    isReply: false,
    reply: { author: null, message: null },
  };
}

/** The record of a newly created endpoint. */
export function initialRecord(): EndpointRecord {
  return {
    config: {
      'allowed-ids': [],
      blacklist: [],
      channels: perPlatform(() => []),
      isbeta: false,
      logs: perPlatform(() => null),
      'self-user': false,
      webhooks: perPlatform(() => []),
    },
    meta: {
      message: emptyMessage(),
      read: perPlatform(() => false),
      sender: null,
      'sender-channel': null,
      trigger: false,
    },
  };
}
