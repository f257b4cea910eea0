// The update semantics of POST /update/{endpoint}: a pure function from (record, parameters) to a
// new record or the list of problems with the request. No I/O; the store makes it atomic.
import type { operations } from '@chatbridge/api';
import { type Issue, queryIssue } from './issues.ts';
import { type NativeReply, newMessageIdIssues } from './messageIds.ts';
import { type EndpointRecord, type Message, type Platform, LIST_LIMITS, PLATFORMS, emptyMessage, initialRecord } from './record.ts';
import { parseEmbed } from './embed.ts';
import { recordBudgetProblem } from './recordBudget.ts';
import { encodeCharactersNotInUrls, isHttpUrl, parseHttpUrl } from './urls.ts';
import { literalHostRange } from './addressRanges.ts';

/** The update's query parameters, without the token (authentication is not the domain's business). */
export type UpdateParams = Omit<NonNullable<operations['updateEndpoint']['parameters']['query']>, 'token'>;

export interface UpdatePolicy {
  /** Accept plain http webhook URLs (development only). */
  allowPrivateWebhooks: boolean;
}

export type UpdateOutcome =
  /** `json` is `record` as JSON.stringify writes it, for the store and the reply to reuse. */
  { ok: true; record: EndpointRecord; json: string; changed: boolean } | { ok: false; issues: Issue[] };

/** A list parameter: which list it targets and how its values compare. */
interface ListTarget {
  parameter: keyof UpdateParams;
  select: (r: EndpointRecord) => string[];
  limit: number;
  /** Comma-separated values are split into several elements. */
  commaList: boolean;
  /** Normalises a value for the "already present" comparison. */
  key: (value: string) => string;
  validate?: (value: string, policy: UpdatePolicy) => string | undefined;
}

const exact = (v: string) => v;
const caseless = (v: string) => v.toLowerCase();

function webhookProblem(value: string, policy: UpdatePolicy): string | undefined {
  const url = parseHttpUrl(value);
  if (!url || (url.protocol !== 'https:' && !policy.allowPrivateWebhooks)) {
    return policy.allowPrivateWebhooks ? 'must be an absolute http or https URL' : 'must be an absolute https URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  // Delivery refuses these too (names are checked when they resolve); an address literal is refused
  // here already, so the bot hears of it now instead of its message never arriving.
  const range = policy.allowPrivateWebhooks ? undefined : literalHostRange(url.hostname);
  if (range === undefined || range === 'unicast') return undefined;
  return `must not point at a non-public address (${range}): only public addresses receive webhooks`;
}

/** Length in Unicode code points, as the spec counts it. */
const codePoints = (value: string) => {
  let n = 0;
  for (const _ of value) n++;
  return n;
};

/**
 * The seed bounds `allowed_ids` and `message_attachments` per item ("an ID", "URL of an attachment");
 * the spec's schema can only bound the whole value, which holds a comma list, so each item is checked
 * here.
 */
const ALLOWED_ID_LENGTH = { min: 5, max: 50 };
const MIN_ATTACHMENT_URL_LENGTH = 20;

function allowedIdProblem(value: string): string | undefined {
  const n = codePoints(value);
  if (n >= ALLOWED_ID_LENGTH.min && n <= ALLOWED_ID_LENGTH.max) return undefined;
  return `each ID must be ${ALLOWED_ID_LENGTH.min} to ${ALLOWED_ID_LENGTH.max} characters ('${value.slice(0, 60)}' has ${n})`;
}

const LIST_TARGETS: ListTarget[] = [
  ...(['chat_a', 'chat_b'] as const).map(
    (p): ListTarget => ({
      parameter: `webhook_${p}`,
      select: (r) => r.config.webhooks[p],
      limit: LIST_LIMITS.perPlatform,
      commaList: false,
      key: exact,
      validate: webhookProblem,
    }),
  ),
  ...PLATFORMS.map(
    (p): ListTarget => ({
      parameter: `channel_${p}`,
      select: (r) => r.config.channels[p],
      limit: LIST_LIMITS.perPlatform,
      commaList: false,
      key: exact,
    }),
  ),
  { parameter: 'blacklist', select: (r) => r.config.blacklist, limit: LIST_LIMITS.blacklist, commaList: true, key: caseless },
  {
    parameter: 'allowed_ids',
    select: (r) => r.config['allowed-ids'],
    limit: LIST_LIMITS.allowedIds,
    commaList: true,
    key: exact,
    validate: allowedIdProblem,
  },
];

const splitCommaList = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
/**
 * Attachment URLs are split only at a comma that starts the next URL (`,https://`, `, http://`): a
 * comma inside a URL (`/resize,w_100/photo.png`) is part of it. Commas and blanks that end an item
 * are separators (`a.png,`, `a.png,,b.png`, `a.png, ,b.png`), as in the other comma lists.
 */
const splitUrlList = (value: string) =>
  value
    .split(/,(?=[\s,]*https?:\/\/)/i)
    .map((s) => s.replace(/^[\s,]+|[\s,]+$/g, ''))
    .filter((s) => s.length > 0);

/**
 * Applies `params` to the record given as its JSON text, as both stores commit it (the output of
 * JSON.stringify). Either every parameter is applied, or none is and the issues say why. With
 * `only_check`, everything is validated and nothing is changed.
 *
 * Parsing the text makes the private copy the rules edit, and comparing the result's text with it
 * tells whether anything changed: half the work of cloning the record and serialising both
 * (JSON.parse of the stored text is a cheaper deep copy than structuredClone of the parsed record).
 */
export function applyUpdate(recordJson: string, params: UpdateParams, policy: UpdatePolicy, reply?: NativeReply): UpdateOutcome {
  const next = JSON.parse(recordJson) as EndpointRecord;
  const issues: Issue[] = newMessageIdIssues(params);

  applyLists(next, params, policy, issues);
  applyConfigScalars(next, params, issues);
  leavePendingMessage(next, params);
  applyMessageFields(next.meta.message, params, issues);
  if (reply !== undefined && params.trigger === true) answerNatively(next.meta.message, reply);
  applySenderAndTrigger(next, params);

  if (issues.length > 0) return { ok: false, issues };
  if (params.only_check === true) return { ok: true, record: JSON.parse(recordJson) as EndpointRecord, json: recordJson, changed: false };
  const json = JSON.stringify(next);
  const tooLarge = recordBudgetProblem(json, recordJson);
  if (tooLarge !== undefined) return { ok: false, issues: [queryIssue(largestParameter(params), tooLarge)] };
  return { ok: true, record: next, json, changed: json !== recordJson };
}

/** The parameter with the longest text value: the one to shorten when the record would pass its budget. */
function largestParameter(params: UpdateParams): string {
  let name: string | undefined;
  let length = -1;
  for (const [key, value] of Object.entries(params)) {
    if (typeof value === 'string' && value.length > length) [name, length] = [key, value.length];
    else name ??= key;
  }
  return name ?? 'query';
}

function applyLists(next: EndpointRecord, params: UpdateParams, policy: UpdatePolicy, issues: Issue[]): void {
  const given = LIST_TARGETS.filter((t) => params[t.parameter] !== undefined);
  const index = params.index;
  // webhook_chat_c/d are list parameters of the seed too, accepted and ignored (those platforms have no webhooks).
  const ignoredLists = params.webhook_chat_c !== undefined || params.webhook_chat_d !== undefined;
  if (index !== undefined && given.length === 0 && !ignoredLists) {
    issues.push(
      queryIssue('index', 'index needs at least one list parameter (webhook_chat_a, webhook_chat_b, channel_*, blacklist, allowed_ids)'),
    );
  }
  for (const target of given) {
    const raw = String(params[target.parameter]);
    const values = target.commaList ? splitCommaList(raw) : [raw];
    const problem = values.map((v) => target.validate?.(v, policy)).find((m) => m !== undefined);
    if (problem) {
      issues.push(queryIssue(target.parameter, problem));
      continue;
    }
    if (values.length === 0) {
      issues.push(queryIssue(target.parameter, 'must contain at least one non-empty item'));
      continue;
    }
    const list = target.select(next);
    if (index === undefined) appendUnique(list, values, target, issues);
    else overwriteAt(list, index, values, target, issues);
  }
}

function appendUnique(list: string[], values: string[], target: ListTarget, issues: Issue[]): void {
  const present = new Set(list.map(target.key));
  for (const value of values) {
    if (present.has(target.key(value))) continue;
    if (list.length >= target.limit) {
      issues.push(queryIssue(target.parameter, `the list is full (at most ${target.limit} elements)`));
      return;
    }
    list.push(value);
    present.add(target.key(value));
  }
}

function overwriteAt(list: string[], index: number, values: string[], target: ListTarget, issues: Issue[]): void {
  if (values.length !== 1) {
    issues.push(queryIssue(target.parameter, 'a comma-separated list cannot be combined with index'));
    return;
  }
  if (index >= list.length) {
    issues.push(queryIssue('index', `${target.parameter}: no element at index ${index} (the list has ${list.length})`));
    return;
  }
  const value = values[0]!;
  const elsewhere = list.findIndex((v, i) => i !== index && target.key(v) === target.key(value));
  if (elsewhere !== -1) {
    issues.push(queryIssue(target.parameter, `the value already stands at index ${elsewhere}`));
    return;
  }
  list[index] = value;
}

function applyConfigScalars(next: EndpointRecord, params: UpdateParams, _issues: Issue[]): void {
  for (const p of PLATFORMS) {
    const log = params[`log_${p}`];
    if (log !== undefined) next.config.logs[p] = log;
  }
  if (params.selfuse !== undefined) next.config['self-user'] = params.selfuse;
  if (params.beta !== undefined) next.config.isbeta = params.beta;
}

/**
 * A message's fields belong to it. A request that replaces a pending message (`trigger=true`) starts
 * the new one from initial message fields, so nothing of the old one's attachments, author, embed or
 * reply is carried over; one that ends it (`trigger=false`) returns the endpoint to idle as a full read
 * or the TTL does. Either way the request's own parameters are applied afterwards. Fields set while
 * idle are kept: they are for the next message.
 */
function leavePendingMessage(next: EndpointRecord, params: UpdateParams): void {
  if (!next.meta.trigger) return;
  if (params.trigger === true) next.meta.message = emptyMessage();
  else if (params.trigger === false) next.meta = initialRecord().meta;
}

/** The parameters that set a message's fields (updateEndpoint's, and editMessage's subset). */
export type MessageFieldParams = Pick<
  UpdateParams,
  | 'message_author_name'
  | 'message_author_avatar'
  | 'message_author_id'
  | 'message_content'
  | 'message_reply'
  | 'message_reply_message'
  | 'message_reply_author'
  | 'message_attachments'
  | 'message_embed'
>;

/**
 * A native reply (`message_reply_to` found in the log): the message names the one it answers and its
 * copies' IDs, so each platform can reply to its own copy. The quoted fields stay as the sender set
 * them, for platforms (and bots) that show a reply as a quote.
 */
function answerNatively(message: Message, reply: NativeReply): void {
  message.isReply = true;
  message.reply = { ...message.reply, number: reply.number, ids: reply.ids };
}

/** Applies the message parameters given to `message`, or adds the issues with them. */
export function applyMessageFields(message: Message, params: MessageFieldParams, issues: Issue[]): void {
  // Not a reply: the replied-to message's members are cleared (this request may set them again).
  if (params.message_reply === false) message.reply = { author: null, message: null };
  if (params.message_author_name !== undefined) message.author.name = params.message_author_name;
  if (params.message_author_avatar !== undefined) message.author.avatar = params.message_author_avatar;
  if (params.message_author_id !== undefined) message.author.id = params.message_author_id;
  if (params.message_content !== undefined) message.content = params.message_content;
  if (params.message_reply !== undefined) message.isReply = params.message_reply;
  if (params.message_reply_message !== undefined) message.reply.message = params.message_reply_message;
  if (params.message_reply_author !== undefined) message.reply.author = params.message_reply_author;
  if (params.message_attachments !== undefined) {
    const urls = splitUrlList(params.message_attachments);
    const short = urls.find((url) => codePoints(url) < MIN_ATTACHMENT_URL_LENGTH);
    if (urls.length === 0 || !urls.every(isHttpUrl)) {
      issues.push(queryIssue('message_attachments', 'must be one or more comma-separated absolute http(s) URLs'));
    } else if (short !== undefined) {
      issues.push(
        queryIssue(
          'message_attachments',
          `each URL must be at least ${MIN_ATTACHMENT_URL_LENGTH} characters ('${short}' has ${codePoints(short)})`,
        ),
      );
    } else {
      message.attachments = urls.map(encodeCharactersNotInUrls);
    }
  }
  if (params.message_embed !== undefined) {
    const parsed = parseEmbed(params.message_embed);
    if (parsed.ok) message.embed = parsed.embed;
    else issues.push(queryIssue('message_embed', parsed.problem));
  }
}

function applySenderAndTrigger(next: EndpointRecord, params: UpdateParams): void {
  const meta = next.meta;
  if (params.sender_channel !== undefined) meta['sender-channel'] = params.sender_channel;
  if (params.sender !== undefined) {
    meta.sender = params.sender;
    meta.read[params.sender] = true;
  }
  if (params.trigger === true) {
    meta.trigger = true;
    // A new message: only the sender and platforms with nothing to deliver to count as read.
    for (const p of PLATFORMS) meta.read[p] = p === meta.sender || next.config.channels[p].length === 0;
  } else if (params.trigger === false) {
    meta.trigger = false;
  }
}

export type { Platform };
