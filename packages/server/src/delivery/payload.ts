// The webhook request body built from an endpoint record's latest message: the common chat-webhook
// JSON (Discord-style execute-webhook body). Pure: no I/O, no clock, no randomness.
//
// Decisions (the spec's WebhookPayload schema states them for receivers):
//
// - Source. Only `meta.message` is read; `config` and the other `meta` members play no part.
// - `content` is assembled from up to three blocks joined by "\n", in this order:
//     1. the reply quote, only when `isReply` is true and `reply.message` is a non-empty string
//        (a stale `reply` with `isReply: false` is ignored): every line of the replied-to message is
//        prefixed with "> "; the first line reads "> **<reply.author>**: <line>", or "> <line>" when
//        `reply.author` is null or empty. Line breaks inside the author's name become spaces so the
//        quote stays one block. The quoted text is cut to 500 characters (with "…") so a long
//        replied-to message cannot push the new message out of the 2000-character limit, and when
//        the content is still over that limit, further, down to 100, before the new text is cut;
//     2. `content`, exactly as stored (no escaping, no trimming), when non-null and non-empty;
//     3. the attachment URLs, one per line, as stored.
//   When all three are empty, `content` is omitted.
// - Limits (counted in UTF-16 code units, which is never fewer than the code points chat platforms
//   count, so the result is within the limit either way; a cut never splits a surrogate pair):
//   `content` ≤ 2000, `username` ≤ 80; embed `title` ≤ 256, `description` ≤ 4096, `footer.text`
//   ≤ 2048, field `name` ≤ 256, field `value` ≤ 1024, at most 25 fields, and the embed's text in
//   total (title + description + footer + field names and values) ≤ 6000: trailing fields are dropped
//   first, then the description is shortened. Text is cut only when it is over its limit, and then
//   ends with "…" (the cut text including the "…" is exactly at the limit). A `content` over 2000
//   keeps its attachment links whole: the quote and message text before them are cut to make room
//   (a link is the attachment itself; the end of a long text matters less). Only when the links
//   alone leave no room is the whole `content` cut at its end.
// - `username` is `author.name`, omitted when null or blank (platforms reject an empty name; the
//   webhook's own name is used instead). Not otherwise altered: a platform may still refuse names it
//   reserves (Discord: names containing "discord" or "clyde" give a 400, a permanent rejection).
// - `avatar_url` is `author.avatar`, omitted unless it is an absolute http(s) URL (platforms answer
//   400 to a malformed URL, which would turn a cosmetic problem into a lost message).
// - `embeds` holds one embed only when the stored embed has at least one member that is not the
//   text "None" (EMBED_NONE) or at least one field; members equal to "None" (and empty strings) are
//   omitted, `fields` is omitted when empty. `image.url` / `thumbnail.url` are included only when the
//   value is an absolute http(s) URL, for the same reason as `avatar_url`. A field whose name or value
//   is empty gets a zero-width space (U+200B) there, since platforms reject empty field text; `inline`
//   is passed as stored. An embed left with no member after these rules is omitted.
// - `allowed_mentions` is always `{ "parse": [] }`: bridged text is shown verbatim but can never
//   ping @everyone, @here, roles or users.
// - Null and absent members are omitted, never sent as null.
// - A payload without `content` and without `embeds` is not deliverable (platforms answer 400);
//   `isEmptyPayload` tells the caller to skip it.
// - Native replies (`webhookBodyFor`, per receiving platform): when the message is a reply (`isReply`
//   true) and `reply.ids` holds the receiving platform's ID of the replied-to message, the create
//   payload carries `message_reference: { message_id: <that ID>, fail_if_not_exists: false }`, the chat
//   webhook's reply reference. `fail_if_not_exists: false`: when that copy has since been deleted on
//   the platform, the message is still posted, as a plain one, instead of being refused. The quote stays
//   in `content`, so a receiver that ignores the reference still shows what was replied to. An ID that is
//   not a message ID (1-100 printable ASCII characters) is not sent.
// - Edits (`webhookEditBody`): the edited message rendered as the create renders it (quote, text,
//   links, embed, the same limits), sent as `content` and `embeds`, without `username` or
//   `avatar_url` (an edit cannot change who posted the copy). Both are always present, `""` and `[]`
//   when empty, because a chat webhook's edit leaves an absent member as it was, and the edit replaces
//   the whole message. `allowed_mentions: { "parse": [] }` goes along: an edit's text is parsed for
//   mentions afresh, without regard to what the create allowed, so without it an edit could ping where
//   the create could not. An edit that leaves neither text nor embed has no body (platforms refuse to
//   edit a message to empty); the caller decides what to do instead.
import type { components, webhooks } from '@chatbridge/api';
import type { Embed, EndpointRecord, Message, Platform } from '../domain/record.ts';
import { EMBED_NONE } from '../domain/record.ts';
import { isHttpUrl } from '../domain/urls.ts';
import { isMessageId, nativeReplyTarget } from '../domain/messageIds.ts';

/**
 * The request body a webhook receives, as the spec's `webhooks.messagePending` declares it (generated
 * from openapi/components/schemas/WebhookPayload.yaml, so the code and the published contract agree).
 */
export type WebhookPayload = webhooks['messagePending']['post']['requestBody']['content']['application/json'];
export type WebhookEmbed = components['schemas']['WebhookEmbed'];
export type WebhookEmbedField = components['schemas']['WebhookEmbedField'];

/** The create's body for one receiving platform: a native reply names that platform's copy. */
export interface WebhookCreatePayload extends WebhookPayload {
  message_reference?: { message_id: string; fail_if_not_exists: false };
}

/** The edit's body: what the message shows, never who sent it. */
export type WebhookEditPayload = Required<Pick<WebhookPayload, 'content' | 'embeds' | 'allowed_mentions'>>;

export const PAYLOAD_LIMITS = {
  content: 2000,
  username: 80,
  replyQuote: 500,
  /** A content over its limit cuts the quote first, down to this, before the new message's text. */
  replyQuoteMin: 100,
  embedTitle: 256,
  embedDescription: 4096,
  embedFooter: 2048,
  embedFields: 25,
  fieldName: 256,
  fieldValue: 1024,
  embedTotal: 6000,
} as const;

const ELLIPSIS = '…';
const ZERO_WIDTH_SPACE = '\u200b';

/** `text` unchanged when within `max` UTF-16 code units; otherwise cut to exactly `max`, ending in "…". */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return '';
  let cut = text.slice(0, max - ELLIPSIS.length);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1); // never leave half a surrogate pair
  return cut + ELLIPSIS;
}

const present = (v: string | null | undefined): v is string => typeof v === 'string' && v.length > 0;

function replyQuote(author: string | null, message: string, limit: number): string {
  const lines = truncate(message, limit).split(/\r\n|\r|\n/);
  const who = present(author) ? `**${author.replace(/[\r\n]+/g, ' ')}**: ` : '';
  return lines.map((line, i) => `> ${i === 0 ? who : ''}${line}`).join('\n');
}

function buildEmbed(embed: Embed): WebhookEmbed | undefined {
  const text = (v: string) => v !== EMBED_NONE && v.length > 0;
  const out: WebhookEmbed = {};
  if (text(embed.title)) out.title = truncate(embed.title, PAYLOAD_LIMITS.embedTitle);
  if (text(embed.description)) out.description = truncate(embed.description, PAYLOAD_LIMITS.embedDescription);
  if (text(embed.footer)) out.footer = { text: truncate(embed.footer, PAYLOAD_LIMITS.embedFooter) };
  if (text(embed.image) && isHttpUrl(embed.image)) out.image = { url: embed.image };
  if (text(embed.thumbnail) && isHttpUrl(embed.thumbnail)) out.thumbnail = { url: embed.thumbnail };
  const fields = embed.fields.slice(0, PAYLOAD_LIMITS.embedFields).map((f) => ({
    name: truncate(f.name, PAYLOAD_LIMITS.fieldName) || ZERO_WIDTH_SPACE,
    value: truncate(f.value, PAYLOAD_LIMITS.fieldValue) || ZERO_WIDTH_SPACE,
    inline: f.inline,
  }));

  // The total text limit: drop trailing fields, then shorten the description.
  const fixed = () => (out.title?.length ?? 0) + (out.footer?.text.length ?? 0) + (out.description?.length ?? 0);
  const fieldsLength = () => fields.reduce((n, f) => n + f.name.length + f.value.length, 0);
  while (fields.length > 0 && fixed() + fieldsLength() > PAYLOAD_LIMITS.embedTotal) fields.pop();
  if (out.description !== undefined && fixed() > PAYLOAD_LIMITS.embedTotal) {
    const room = PAYLOAD_LIMITS.embedTotal - (out.title?.length ?? 0) - (out.footer?.text.length ?? 0);
    out.description = truncate(out.description, room);
    if (out.description.length === 0) delete out.description;
  }
  if (fields.length > 0) out.fields = fields;

  return Object.keys(out).length > 0 ? out : undefined;
}

/** `content`: the quote and text, then the links; the text is what gets cut, so the links fit whole. */
function contentOf(text: string, links: string): string | undefined {
  const max = PAYLOAD_LIMITS.content;
  if (text === '' || links === '') return text === '' && links === '' ? undefined : truncate(text || links, max);
  if (text.length + 1 + links.length <= max) return `${text}\n${links}`;
  const room = max - links.length - 1; // 1: the line break before the links
  if (room > ELLIPSIS.length) return `${truncate(text, room)}\n${links}`;
  return truncate(`${text}\n${links}`, max); // the links alone (nearly) fill it
}

/** What a message shows: `content` (quote, text, links) and its embed, each undefined when empty. */
function renderMessage(message: Message): { content: string | undefined; embed: WebhookEmbed | undefined } {
  const links = message.attachments.filter((url) => url.length > 0).join('\n');
  const text = present(message.content) ? message.content : '';
  const joined = (...blocks: string[]) => blocks.filter((b) => b !== '').join('\n');
  let quote = '';
  const replied = message.isReply && present(message.reply.message) ? message.reply.message : '';
  if (replied !== '') {
    quote = replyQuote(message.reply.author, replied, PAYLOAD_LIMITS.replyQuote);
    // Over the limit, the older message's quote gives way first (down to its minimum), the new text after.
    const over = joined(quote, text, links).length - PAYLOAD_LIMITS.content;
    const quoted = Math.min(replied.length, PAYLOAD_LIMITS.replyQuote);
    if (over > 0 && quoted > PAYLOAD_LIMITS.replyQuoteMin) {
      // The longest quote that fits. Not `quoted - over`: every line break cut from the replied-to text
      // also takes its "> " prefix, so the rendered quote shrinks faster than its source.
      const fits = (limit: number) =>
        joined(replyQuote(message.reply.author, replied, limit), text, links).length <= PAYLOAD_LIMITS.content;
      let lo: number = PAYLOAD_LIMITS.replyQuoteMin;
      let hi = quoted - 1;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (fits(mid)) lo = mid;
        else hi = mid - 1;
      }
      quote = replyQuote(message.reply.author, replied, lo);
    }
  }
  return { content: contentOf(joined(quote, text), links), embed: buildEmbed(message.embed) };
}

/** The webhook body for the record's latest message. See the decisions at the top of this file. */
export function buildWebhookPayload(record: EndpointRecord): WebhookPayload {
  const message = record.meta.message;
  const { content, embed } = renderMessage(message);
  const payload: WebhookPayload = { allowed_mentions: { parse: [] } };
  if (content !== undefined) payload.content = content;
  const name = message.author.name;
  if (present(name) && name.trim().length > 0) payload.username = truncate(name, PAYLOAD_LIMITS.username);
  const avatar = message.author.avatar;
  if (present(avatar) && isHttpUrl(avatar)) payload.avatar_url = avatar;
  if (embed) payload.embeds = [embed];
  return payload;
}

/**
 * The receiving platform's ID of the message this one natively replies to, when the record holds it
 * and it is usable; else undefined.
 */
function replyTargetOn(message: Message, platform: Platform): string | undefined {
  if (!message.isReply) return undefined;
  const id = message.reply.ids?.[platform];
  return isMessageId(id) ? id : undefined;
}

/** The create's body for the record's latest message as `platform` receives it (with its reply reference). */
export function buildWebhookPayloadFor(record: EndpointRecord, platform: Platform): WebhookCreatePayload {
  const payload: WebhookCreatePayload = buildWebhookPayload(record);
  const target = replyTargetOn(record.meta.message, platform);
  if (target !== undefined) payload.message_reference = { message_id: target, fail_if_not_exists: false };
  return payload;
}

/** The edit's body for a message as it now is. See the decisions at the top of this file. */
export function buildWebhookEditPayload(message: Message): WebhookEditPayload {
  const { content, embed } = renderMessage(message);
  return { content: content ?? '', embeds: embed ? [embed] : [], allowed_mentions: { parse: [] } };
}

/** True when the payload has neither content nor an embed: platforms reject it, so don't send it. */
export function isEmptyPayload(payload: WebhookPayload): boolean {
  return payload.content === undefined && (payload.embeds === undefined || payload.embeds.length === 0);
}

/** The serialised webhook body for the record's message; undefined when there is nothing to show. */
export function webhookBody(record: EndpointRecord): string | undefined {
  const payload = buildWebhookPayload(record);
  return isEmptyPayload(payload) ? undefined : JSON.stringify(payload);
}

/**
 * The serialised create body for the record's message as `platform` receives it (a native reply names
 * that platform's copy); undefined when there is nothing to show.
 */
export function webhookBodyFor(record: EndpointRecord, platform: Platform): string | undefined {
  const payload = buildWebhookPayloadFor(record, platform);
  return isEmptyPayload(payload) ? undefined : JSON.stringify(payload);
}

/**
 * In a queued create's body, a native reply's target number (the relay's, removed before sending).
 * The receiving platform's copy of the target may be made after the reply was accepted (a webhook's
 * queue is often behind), so the relay names it by the IDs the log knows when it sends. No chat
 * webhook's payload has a member of this name.
 */
export const QUEUED_REPLY_TO = 'chatbridge:reply_to';

/** The create body the outbox keeps for `platform`: webhookBodyFor's, and a native reply's target number. */
export function queuedCreateBody(record: EndpointRecord, platform: Platform): string | undefined {
  const payload = buildWebhookPayloadFor(record, platform);
  if (isEmptyPayload(payload)) return undefined;
  const target = nativeReplyTarget(record.meta.message);
  return JSON.stringify(target === undefined ? payload : { ...payload, [QUEUED_REPLY_TO]: target });
}

/** A queued create's payload to send, and its native reply's target number (bodies queued before it was kept have none). */
export function parseQueuedCreate(body: string): { payload: WebhookCreatePayload; replyTo: number | undefined } {
  const { [QUEUED_REPLY_TO]: replyTo, ...payload } = JSON.parse(body) as WebhookCreatePayload & { [QUEUED_REPLY_TO]?: unknown };
  return { payload, replyTo: typeof replyTo === 'number' && Number.isSafeInteger(replyTo) && replyTo >= 1 ? replyTo : undefined };
}

/** The payload replying to the receiving platform's copy `copyId`; unchanged when that is not a message ID. */
export function withReplyReference(payload: WebhookCreatePayload, copyId: string | undefined): WebhookCreatePayload {
  return isMessageId(copyId) ? { ...payload, message_reference: { message_id: copyId, fail_if_not_exists: false } } : payload;
}

/**
 * The serialised edit body (`PATCH …/messages/<ID>`) for a message as it now is; undefined when it
 * would show nothing (a chat platform refuses to edit a message to empty).
 */
export function webhookEditBody(message: Message): string | undefined {
  const payload = buildWebhookEditPayload(message);
  return payload.content === '' && payload.embeds.length === 0 ? undefined : JSON.stringify(payload);
}
