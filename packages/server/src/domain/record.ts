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

/**
 * A private copy of a record that the update rules may edit. Every object and array is new; strings
 * are shared (they are immutable). The schema is closed and every member required, so copying member
 * by member is exact, and spreading each object first keeps its members' order, which the stored text
 * has and JSON.stringify reproduces. For the benchmark's 1.5 KB record, 0.5 us in a loop against 7.6
 * for JSON.parse of its text, and far less garbage (the parse copies every string).
 */
export function copyRecord(r: EndpointRecord): EndpointRecord {
  const { config: c, meta: m } = r;
  const message = m.message;
  return {
    ...r,
    config: {
      ...c,
      'allowed-ids': [...c['allowed-ids']],
      blacklist: [...c.blacklist],
      channels: copyLists(c.channels),
      logs: { ...c.logs },
      webhooks: copyLists(c.webhooks),
    },
    meta: {
      ...m,
      message: {
        ...message,
        attachments: [...message.attachments],
        author: { ...message.author },
        embed: { ...message.embed, fields: message.embed.fields.map((f) => ({ ...f })) },
        reply: { ...message.reply },
      },
      read: { ...m.read },
    },
  };
}

function copyLists(lists: Record<Platform, string[]>): Record<Platform, string[]> {
  return { ...lists, chat_a: [...lists.chat_a], chat_b: [...lists.chat_b], chat_c: [...lists.chat_c], chat_d: [...lists.chat_d] };
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
