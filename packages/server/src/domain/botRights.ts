// What a bot key may do on an endpoint, as pure functions of the record and the request's parameters.
// A key acts for one platform, and only on endpoints where that platform takes part (has a channel):
// the community consented to that platform's bot by bridging a channel of it, which only its token
// (or the operator) can do. There the key changes what belongs to its platform (its channels, log
// channel and webhooks, its own messages, its read flag); what the whole community shares (blacklist,
// allowed IDs, delivery mode, beta, another platform's message or bridges) takes the endpoint token.
// The tables below are the rule; the spec and SECURITY.md print them.
import type { operations } from '@chatbridge/api';
import { type Issue, queryIssue } from './issues.ts';
import type { QueuedMessage } from './messageQueue.ts';
import { type EndpointRecord, type Platform, PLATFORMS } from './record.ts';

type UpdateParams = Omit<NonNullable<operations['updateEndpoint']['parameters']['query']>, 'token'>;
type RemovalParams = Omit<NonNullable<operations['removeFromEndpoint']['parameters']['query']>, 'token'>;

/** Whether `platform` takes part in the endpoint: it has at least one channel there. */
export const takesPart = (record: EndpointRecord, platform: Platform): boolean => record.config.channels[platform].length > 0;

/**
 * Who may send an update parameter with a bot key:
 * - `any`: changes nothing by itself (`index` places the list parameters beside it, `only_check`
 *   applies nothing); those list parameters are judged on their own.
 * - `own platform`: only the platform the parameter names (`channel_X`, `log_X`, `webhook_X`).
 * - `own message`: the message in flight, only with `sender` = the key's platform, and not while
 *   another platform's message is pending unless the request starts a new one (`trigger=true`).
 * - `own message to end`: `trigger=false` withdraws every unread message, so a key may send it only
 *   while every unread message is its platform's own.
 * - `endpoint token`: community-wide settings; never with a bot key.
 */
export type BotRight = 'any' | 'own platform' | 'own message' | 'own message to end' | 'endpoint token';

const MESSAGE_PARAMETERS = [
  'sender',
  'sender_channel',
  'message_author_name',
  'message_author_avatar',
  'message_author_id',
  'message_content',
  'message_attachments',
  'message_embed',
  'message_reply',
  'message_reply_message',
  'message_reply_author',
  'message_id',
  'message_reply_to',
] as const satisfies readonly (keyof UpdateParams)[];

/** The right each updateEndpoint parameter takes (per-platform parameters under their `_X` form). */
export const UPDATE_RIGHTS = {
  index: 'any',
  only_check: 'any',
  channel_X: 'own platform',
  log_X: 'own platform',
  webhook_X: 'own platform',
  ...Object.fromEntries(MESSAGE_PARAMETERS.map((p) => [p, 'own message'])),
  'trigger=true': 'own message',
  'trigger=false': 'own message to end',
  blacklist: 'endpoint token',
  allowed_ids: 'endpoint token',
  selfuse: 'endpoint token',
  beta: 'endpoint token',
} as const satisfies Record<string, BotRight>;

/**
 * The right each removeFromEndpoint parameter takes. `bridge` is `own platform` when the position
 * holds only the key's platform's channel and webhook (other platforms' lists are shorter there):
 * removing a position that holds another platform's channel or webhook un-bridges that platform.
 */
export const REMOVAL_RIGHTS = {
  log_X: 'own platform',
  bridge: 'own platform',
  blacklist: 'endpoint token',
  allowed_ids: 'endpoint token',
} as const satisfies Record<string, BotRight>;

const TOKEN_ONLY = 'is a setting of the whole community: it takes the endpoint token, not a bot key';

/** `channel_chat_b` -> `chat_b`, for the per-platform parameters; undefined for the others. */
function platformOf(parameter: string): Platform | undefined {
  const match = /^(?:channel|log|webhook)_(chat_[a-d])$/.exec(parameter);
  return match ? (match[1] as Platform) : undefined;
}

const otherPlatform = (parameter: string, acting: Platform): string | undefined => {
  const named = platformOf(parameter);
  return named !== undefined && named !== acting ? `belongs to ${named}; a ${acting} bot key changes only ${acting}'s` : undefined;
};

/**
 * What a bot key acting for `acting` may not do of this update, one issue per parameter (empty:
 * everything is its own). The caller has checked that `acting` takes part in the endpoint.
 */
export function updateRefusals(
  record: EndpointRecord,
  acting: Platform,
  params: UpdateParams,
  queue: readonly Pick<QueuedMessage, 's'>[] = [],
): Issue[] {
  const issues: Issue[] = [];
  const pendingFrom = record.meta.trigger ? record.meta.sender : undefined;
  const othersPending = record.meta.trigger && pendingFrom !== acting;
  for (const [parameter, value] of Object.entries(params)) {
    if (value === undefined) continue;
    const foreign = otherPlatform(parameter, acting);
    if (foreign) issues.push(queryIssue(parameter, foreign));
    else if (parameter === 'blacklist' || parameter === 'allowed_ids' || parameter === 'selfuse' || parameter === 'beta') {
      issues.push(queryIssue(parameter, TOKEN_ONLY));
    } else if (parameter === 'trigger' && value === false) {
      // It withdraws every unread message: the key's own to withdraw only when it sent them all.
      const others = queue.filter((m) => m.s !== acting).length;
      if (others > 0)
        issues.push(
          queryIssue(parameter, `false would withdraw ${others} unread message(s) another platform sent: that takes the endpoint token`),
        );
    } else if ((MESSAGE_PARAMETERS as readonly string[]).includes(parameter) || parameter === 'trigger') {
      if (params.sender !== acting) {
        if (parameter !== 'sender') issues.push(queryIssue(parameter, `is part of a message: send sender=${acting} with it`));
        // `sender` naming another platform is refused by the acting-platform rule (actingPlatform.ts).
      } else if (othersPending && params.trigger !== true) {
        issues.push(
          queryIssue(parameter, `${pendingFrom ?? 'another platform'}'s message is pending: only trigger=true starts one of ${acting}'s`),
        );
      }
    }
  }
  return issues;
}

/** What a bot key acting for `acting` may not remove, one issue per parameter (empty: all its own). */
export function removalRefusals(record: EndpointRecord, acting: Platform, params: RemovalParams): Issue[] {
  const issues: Issue[] = [];
  for (const [parameter, value] of Object.entries(params)) {
    if (value === undefined) continue;
    const foreign = otherPlatform(parameter, acting);
    if (foreign) issues.push(queryIssue(parameter, foreign));
    else if (parameter === 'blacklist' || parameter === 'allowed_ids') issues.push(queryIssue(parameter, TOKEN_ONLY));
    else if (parameter === 'bridge') {
      const i = value as number;
      const held = PLATFORMS.filter(
        (p) => p !== acting && (record.config.channels[p][i] !== undefined || record.config.webhooks[p][i] !== undefined),
      );
      if (held.length > 0) {
        issues.push(
          queryIssue(parameter, `position ${i} holds ${held.join(' and ')}'s channel or webhook: removing it takes the endpoint token`),
        );
      }
    }
  }
  return issues;
}

/** The detail of a 403 for these issues. */
export const refusalDetail = (acting: Platform, issues: Issue[]): string =>
  `A ${acting} bot key may not change ${issues.map((i) => i.parameter).join(', ')} here. Nothing was applied.`;

/** A request the acting bot key may not make: `detail` says why, `issues` names each parameter. */
export interface Forbidden {
  kind: 'forbidden';
  detail: string;
  issues?: Issue[];
}

/** The refusal of these issues, if there are any. */
export const forbiddenFor = (acting: Platform, issues: Issue[]): Forbidden | undefined =>
  issues.length > 0 ? { kind: 'forbidden', detail: refusalDetail(acting, issues), issues } : undefined;
