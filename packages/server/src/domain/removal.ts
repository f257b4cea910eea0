// The removal rules of POST /remove/{endpoint}: a pure function from (row, parameters) to the row to
// commit, or the list of problems with the request. No I/O; the store makes it atomic.
//
// A bridge is a position i across the platforms' lists: channels.X[i] and webhooks.X[i] belong
// together (updateEndpoint appends to each list on its own, so lists of one platform may differ in
// length). Removing bridge i takes position i out of every list that has it, so every element after
// it moves down by one in every list at once, and two elements that stood at one position still do.
import type { operations } from '@chatbridge/api';
import { type Forbidden, forbiddenFor, removalRefusals } from './botRights.ts';
import { type Issue, queryIssue } from './issues.ts';
import { type EndpointRecord, type Platform, PLATFORMS } from './record.ts';
import type { Decision, MessageState } from './row.ts';
import type { CommittedRow } from './updateDecision.ts';

export type { CommittedRow };

/** The removal's query parameters, without the token (authentication is not the domain's business). */
export type RemovalParams = Omit<NonNullable<operations['removeFromEndpoint']['parameters']['query']>, 'token'>;

export type RemovalOutcome =
  /** `json` is `record` as JSON.stringify writes it; `removedWebhooks` the webhooks no longer in the record. */
  | { ok: true; record: EndpointRecord; json: string; changed: boolean; removedWebhooks: { platform: Platform; url: string }[] }
  | { ok: false; issues: Issue[] };

export type RemovalResult =
  | { kind: 'ok'; record: EndpointRecord; json: string; state: MessageState }
  | { kind: 'invalid'; issues: Issue[] };

const splitCommaList = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);

/** Elements of `list` whose key is not among the keys of `values`. */
function without(list: string[], values: string[], key: (v: string) => string): string[] {
  const gone = new Set(values.map(key));
  return list.filter((v) => !gone.has(key(v)));
}

/**
 * Applies `params` to the record given as its JSON text (as both stores commit it). Either every
 * parameter is applied, or none is and the issues say why.
 */
export function applyRemoval(recordJson: string, params: RemovalParams): RemovalOutcome {
  const next = JSON.parse(recordJson) as EndpointRecord;
  const config = next.config;
  const issues: Issue[] = [];

  for (const [parameter, raw] of [
    ['blacklist', params.blacklist],
    ['allowed_ids', params.allowed_ids],
  ] as const) {
    if (raw !== undefined && splitCommaList(raw).length === 0)
      issues.push(queryIssue(parameter, 'must contain at least one non-empty item'));
  }
  if (params.blacklist !== undefined)
    config.blacklist = without(config.blacklist, splitCommaList(params.blacklist), (v) => v.toLowerCase());
  if (params.allowed_ids !== undefined)
    config['allowed-ids'] = without(config['allowed-ids'], splitCommaList(params.allowed_ids), (v) => v);

  const removedWebhooks: { platform: Platform; url: string }[] = [];
  const bridge = params.bridge;
  if (bridge !== undefined) {
    const longest = Math.max(...PLATFORMS.flatMap((p) => [config.channels[p].length, config.webhooks[p].length]));
    if (bridge >= longest) {
      issues.push(queryIssue('bridge', `no bridge at position ${bridge} (the longest channels or webhooks list has ${longest})`));
    } else {
      for (const p of PLATFORMS) {
        config.channels[p].splice(bridge, 1);
        const [url] = config.webhooks[p].splice(bridge, 1);
        // A URL may stand in a list twice (records imported from the original service): still there, still a target.
        if (url !== undefined && !config.webhooks[p].includes(url)) removedWebhooks.push({ platform: p, url });
      }
    }
  }

  for (const p of PLATFORMS) if (params[`log_${p}`] === true) config.logs[p] = null;

  if (issues.length > 0) return { ok: false, issues };
  const json = JSON.stringify(next);
  return { ok: true, record: next, json, changed: json !== recordJson, removedWebhooks };
}

/**
 * What an authenticated removal does to the row: the new record, nothing written when nothing changed
 * (no event, no version), and the pending message's deliveries to removed webhooks dropped with it.
 * The message lifecycle is untouched: a removal neither starts nor ends a message.
 */
export function decideRemoval(current: CommittedRow, params: RemovalParams): Decision<RemovalResult> {
  const outcome = applyRemoval(current.recordJson, params);
  if (!outcome.ok) return { result: { kind: 'invalid', issues: outcome.issues } };
  const result: RemovalResult = { kind: 'ok', record: outcome.record, json: outcome.json, state: current.state };
  if (!outcome.changed) return { result };
  return {
    write: {
      record: outcome.record,
      recordJson: outcome.json,
      state: current.state,
      ...(outcome.removedWebhooks.length > 0 && { dropDeliveriesTo: outcome.removedWebhooks }),
    },
    result,
  };
}

/**
 * removeFromEndpoint for a request acting for `acting` (a bot key's platform; undefined: the
 * endpoint's token or the admin token): what the key may not remove is refused with nothing applied
 * (botRights.ts), else the removal is decided.
 */
export function decideRemovalAs(
  acting: Platform | undefined,
  current: CommittedRow & { record: EndpointRecord },
  params: RemovalParams,
): Decision<RemovalResult | Forbidden> {
  const forbidden = acting === undefined ? undefined : forbiddenFor(acting, removalRefusals(current.record, acting, params));
  return forbidden ? { result: forbidden } : decideRemoval(current, params);
}
