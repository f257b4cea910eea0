// One record of the original service (`<id>.json`) as a chatbridge record. Every value is applied as
// the update that would set it (the domain's applyUpdate, after the spec's bound for that update
// parameter), so the result is a record the API itself could have built; a value either is applied
// or is refused with the reason. Message state is not carried over: the record starts idle.
import { PLATFORMS, type Platform, type EndpointRecord, initialRecord } from '../domain/record.ts';
import { applyUpdate, type UpdateParams, type UpdatePolicy } from '../domain/update.ts';

/** The original's platform keys, in the order of chatbridge's chat_a..chat_d. */
export const ORIGINAL_PLATFORMS: Record<string, Platform> = { discord: 'chat_a', guilded: 'chat_b', revolt: 'chat_c', nerimity: 'chat_d' };
const ORIGINAL_NAME = Object.fromEntries(Object.entries(ORIGINAL_PLATFORMS).map(([name, p]) => [p, name])) as Record<Platform, string>;

/** The config fields chatbridge takes over; any other (emojis, emoji_filtering, ...) is refused. */
const KNOWN_CONFIG = new Set(['channels', 'webhooks', 'logs', 'blacklist', 'allowed-ids', 'isbeta', 'self-user']);

export interface FieldRefusal {
  /** Where in the original record, platform keys as the original wrote them: `config.channels.guilded[0]`. */
  field: string;
  reason: string;
}

export interface MappedRecord {
  record: EndpointRecord;
  /** JSON.stringify(record), as the stores keep it. */
  recordJson: string;
  refused: FieldRefusal[];
}

export type ParameterProblem = (name: string, value: unknown) => string | undefined;

/**
 * A number of an original record file, as the file wrote it. The original stored some IDs (Discord's
 * are 64-bit) as JSON numbers; past 2^53 a double cannot hold them, so a number is kept as its source
 * text and read as an ID only where an ID belongs.
 */
export class SourceNumber {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/**
 * An original record file's JSON, every number a SourceNumber. The text comes from the third argument
 * Node 24 (the version the CLI requires) gives a reviver: a primitive's source text.
 */
export function parseOriginalJson(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown, context?: { source: string }) =>
    typeof value === 'number' ? new SourceNumber(context!.source) : value,
  );
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof SourceNumber);
function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (v instanceof SourceNumber) return 'a number';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/**
 * An ID as the original stored it: a string, or a number written in digits alone (no sign, fraction or
 * exponent), read as exactly those digits. Anything else is not an ID (undefined).
 */
const idText = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : v instanceof SourceNumber && /^\d+$/.test(v.text) ? v.text : undefined;
const NOT_AN_ID = 'must be a string, or an ID written as a whole number in digits';

/** A value as the text of the update that sets it: an ID where `id`, otherwise a string only. */
const textOf = (v: unknown, id: boolean): string | undefined => (id ? idText(v) : typeof v === 'string' ? v : undefined);
/** Why textOf found no text in `v`. */
const notText = (v: unknown, id: boolean) => `${id ? NOT_AN_ID : 'must be a string'} (found ${typeName(v)})`;

/** A value of an update: the parameter that sets it and where it stands in the original record. */
interface Setting {
  parameter: keyof UpdateParams;
  value: string | boolean;
  field: string;
}

class RecordBuilder {
  json = JSON.stringify(initialRecord());
  readonly refused: FieldRefusal[] = [];

  private readonly policy: UpdatePolicy;
  private readonly parameterProblem: ParameterProblem;

  constructor(policy: UpdatePolicy, parameterProblem: ParameterProblem) {
    this.policy = policy;
    this.parameterProblem = parameterProblem;
  }

  refuse(field: string, reason: string): void {
    this.refused.push({ field, reason });
  }

  /** Why each setting cannot be applied, by field (empty: all were applied, together). */
  apply(settings: Setting[]): Map<string, string> {
    const problems = new Map<string, string>();
    for (const s of settings) {
      const problem = this.parameterProblem(s.parameter, s.value);
      if (problem) problems.set(s.field, `${s.parameter} ${problem}`);
    }
    if (problems.size > 0 || settings.length === 0) return problems;
    const params = Object.fromEntries(settings.map((s) => [s.parameter, s.value])) as UpdateParams;
    const outcome = applyUpdate(this.json, params, this.policy);
    if (!outcome.ok) {
      for (const issue of outcome.issues) {
        const field = settings.find((s) => s.parameter === issue.parameter)?.field ?? settings[0]!.field;
        problems.set(field, `${issue.parameter}: ${issue.message}`);
      }
      return problems;
    }
    this.json = outcome.json;
    return problems;
  }
}

/** A list of the original record at `field`, or undefined (refused) when it is not a list. */
function listAt(b: RecordBuilder, parent: Record<string, unknown>, key: string, field: string): unknown[] | undefined {
  const value = parent[key];
  if (value === undefined) return [];
  if (Array.isArray(value)) return value;
  b.refuse(field, `must be a list (found ${typeName(value)})`);
  return undefined;
}

/** A per-platform object of the original record: its lists by chatbridge platform; unknown keys refused. */
function perPlatform(
  b: RecordBuilder,
  config: Record<string, unknown>,
  key: 'channels' | 'webhooks',
): Partial<Record<Platform, unknown[]>> {
  const value = config[key];
  if (value === undefined) return {};
  if (!isObject(value)) {
    b.refuse(`config.${key}`, `must be an object of the platforms' lists (found ${typeName(value)})`);
    return {};
  }
  const lists: Partial<Record<Platform, unknown[]>> = {};
  for (const name of Object.keys(value)) {
    const platform = ORIGINAL_PLATFORMS[name];
    if (!platform) b.refuse(`config.${key}.${name}`, `not a platform chatbridge bridges (${Object.keys(ORIGINAL_PLATFORMS).join(', ')})`);
    else {
      const list = listAt(b, value, name, `config.${key}.${name}`);
      if (list) lists[platform] = list;
    }
  }
  return lists;
}

/**
 * Bridge rows: element i of every channel list and of the chat_a/chat_b webhook lists belong together
 * (a message from channels.X[i] goes to channels.Y[i] and webhooks.Y[i]). A row is applied whole, as
 * one update, or refused whole: dropping one element alone would pair every later element with the
 * wrong channel.
 */
function applyBridgeRows(b: RecordBuilder, config: Record<string, unknown>): void {
  const channels = perPlatform(b, config, 'channels');
  const webhooks = perPlatform(b, config, 'webhooks');
  for (const p of PLATFORMS.filter((p) => !(['chat_a', 'chat_b'] as Platform[]).includes(p))) {
    if ((webhooks[p]?.length ?? 0) > 0)
      b.refuse(`config.webhooks.${ORIGINAL_NAME[p]}`, `${p} takes no webhooks in chatbridge (it delivers there otherwise)`);
  }
  const lists: { list: unknown[]; kind: 'channel' | 'webhook'; platform: Platform }[] = [
    ...PLATFORMS.map((platform) => ({ list: channels[platform] ?? [], kind: 'channel' as const, platform })),
    ...(['chat_a', 'chat_b'] as const).map((platform) => ({ list: webhooks[platform] ?? [], kind: 'webhook' as const, platform })),
  ];
  const rows = Math.max(0, ...lists.map((l) => l.list.length));
  for (let i = 0; i < rows; i++) {
    const settings: Setting[] = [];
    const problems = new Map<string, string>();
    for (const { list, kind, platform } of lists) {
      if (i >= list.length) continue;
      const field = `config.${kind}s.${ORIGINAL_NAME[platform]}[${i}]`;
      // A channel is an ID; a webhook is a URL.
      const value = textOf(list[i], kind === 'channel');
      if (value === undefined) problems.set(field, notText(list[i], kind === 'channel'));
      else settings.push({ parameter: `${kind}_${platform}`, value, field });
    }
    if (problems.size === 0) {
      const before = JSON.parse(b.json) as EndpointRecord;
      for (const [field, reason] of b.apply(settings)) problems.set(field, reason);
      if (problems.size === 0) {
        // An element already in its list is skipped by the update: the row would no longer line up.
        const after = JSON.parse(b.json) as EndpointRecord;
        const skipped = settings.filter((s) => {
          const [kind, platform] = s.parameter.split(/_(?=chat_)/) as ['channel' | 'webhook', Platform];
          const pick = (r: EndpointRecord) => (kind === 'channel' ? r.config.channels : r.config.webhooks)[platform];
          return pick(after).length === pick(before).length;
        });
        if (skipped.length > 0) {
          b.json = JSON.stringify(before);
          for (const s of skipped) problems.set(s.field, 'the same value stands in an earlier row of this list');
        }
      }
    }
    if (problems.size === 0) continue;
    for (const [field, reason] of problems) b.refuse(field, reason);
    const dropped = [...settings.map((s) => s.field)].filter((f) => !problems.has(f));
    const cause = [...problems.keys()].join(', ');
    for (const field of dropped)
      b.refuse(field, `dropped with bridge row ${i}, because ${cause} was refused (the lists are matched by position)`);
  }
}

function applyLogs(b: RecordBuilder, config: Record<string, unknown>): void {
  const logs = config.logs;
  if (logs === undefined) return;
  if (!isObject(logs)) return b.refuse('config.logs', `must be an object of the platforms' log channels (found ${typeName(logs)})`);
  for (const [name, value] of Object.entries(logs)) {
    const platform = ORIGINAL_PLATFORMS[name];
    const field = `config.logs.${name}`;
    const channel = idText(value);
    if (!platform) b.refuse(field, 'not a platform chatbridge bridges');
    else if (value === null) continue;
    else if (channel === undefined) b.refuse(field, `${NOT_AN_ID}, or null (found ${typeName(value)})`);
    else for (const [f, reason] of b.apply([{ parameter: `log_${platform}`, value: channel, field }])) b.refuse(f, reason);
  }
}

/** Blacklist words (strings) and allowed IDs (IDs): each element on its own, as the update that appends it. */
function applyList(
  b: RecordBuilder,
  config: Record<string, unknown>,
  key: 'blacklist' | 'allowed-ids',
  parameter: 'blacklist' | 'allowed_ids',
): void {
  const list = listAt(b, config, key, `config.${key}`);
  for (const [i, element] of (list ?? []).entries()) {
    const field = `config.${key}[${i}]`;
    const value = textOf(element, key === 'allowed-ids');
    if (value === undefined) {
      b.refuse(field, notText(element, key === 'allowed-ids'));
      continue;
    }
    // The update splits its value at commas: the element would not be kept as it is.
    if (value.includes(',')) {
      b.refuse(field, `holds a comma (${parameter} would split it into several elements)`);
      continue;
    }
    const before = b.json;
    const problems = b.apply([{ parameter, value, field }]);
    for (const [f, reason] of problems) b.refuse(f, reason);
    if (problems.size === 0 && b.json === before)
      b.refuse(field, key === 'blacklist' ? 'already in the list (words compare ignoring case)' : 'already in the list');
  }
}

function applyFlag(b: RecordBuilder, config: Record<string, unknown>, key: 'isbeta' | 'self-user'): void {
  const value = config[key];
  if (value === undefined)
    return b.refuse(`config.${key}`, `missing (chatbridge's default applies: ${key === 'isbeta' ? 'beta false' : 'selfuse false'})`);
  if (typeof value !== 'boolean') return b.refuse(`config.${key}`, `must be true or false (found ${typeName(value)})`);
  // The original delivered to webhooks itself when self-user was false; chatbridge does when selfuse is true.
  const setting: Setting =
    key === 'isbeta'
      ? { parameter: 'beta', value, field: 'config.isbeta' }
      : { parameter: 'selfuse', value: !value, field: 'config.self-user' };
  for (const [f, reason] of b.apply([setting])) b.refuse(f, reason);
}

/**
 * Maps the original record, as parseOriginalJson read it (a plain JavaScript number is not an ID: its
 * digits may already be lost); undefined when it is not a record at all (no `config` object).
 */
export function mapOriginalRecord(raw: unknown, policy: UpdatePolicy, parameterProblem: ParameterProblem): MappedRecord | undefined {
  if (!isObject(raw) || !isObject(raw.config)) return undefined;
  const config = raw.config;
  const b = new RecordBuilder(policy, parameterProblem);
  for (const key of Object.keys(config)) if (!KNOWN_CONFIG.has(key)) b.refuse(`config.${key}`, 'chatbridge keeps no such setting');
  applyBridgeRows(b, config);
  applyLogs(b, config);
  applyList(b, config, 'blacklist', 'blacklist');
  applyList(b, config, 'allowed-ids', 'allowed_ids');
  applyFlag(b, config, 'isbeta');
  applyFlag(b, config, 'self-user');
  return { record: JSON.parse(b.json) as EndpointRecord, recordJson: b.json, refused: b.refused };
}
