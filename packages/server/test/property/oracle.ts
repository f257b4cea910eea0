// The invariants, checked on every exchange. Each returns human-readable violations; an empty list
// means the exchange was fine.
//
//  1. Never a 5xx, and always a complete HTTP response.
//  2. Every 4xx the app sends is application/problem+json with type/title/status/detail/message,
//     `status` equal to the HTTP status, `message` equal to `detail`, `instance` the request path and
//     `type` the spec's fragment for that status. Requests rejected by Node's own HTTP parser (no
//     X-Request-Id: 400 for a malformed request line, 431 for an oversized head) get a problem
//     document too, without `instance` or `errors` (no request was read), but only requests that are
//     malformed at the HTTP level or whose head exceeds the 128 KiB the spec promises; a well-formed
//     request under that limit must reach the app.
//  3. Every 400 carries a non-empty `errors`, each naming a parameter that was actually sent (its
//     decoded name, its raw name, or the name before `[` for bracket notation), a path parameter of
//     the operation, `body` / a member of the body sent, or a required parameter that is missing.
//     When the request holds a value that is invalid against the spec, the 400 must name only
//     parameters that are not known-valid.
//  4. Status consistent with the request: a definitely invalid request is never 2xx; a request valid
//     in every part gets what the spec says (401 for a missing/foreign token, 200 for a read, ...).
//  5. A rejected request (any non-2xx), and any GET, changes nothing: every watched endpoint row
//     (record, lifecycle state, token digest) and the ID list are byte-identical afterwards. A 2xx changes only
//     the endpoint it addressed.
//  6. A 200 record is the stored record, or (an answer seen by its reader while older messages are
//     unread) the stored config with the queued message `Chatbridge-Message-Number` names; for
//     updateEndpoint, every scalar sent is stored exactly as sent (so no parameter is silently dropped).
import querystring from 'node:querystring';
import type { ApiSpec, OperationSpec, ParamSpec, Schema } from './spec.ts';
import { typeOf } from './spec.ts';
import type { Draft, Rendered } from './cases.ts';
import { type Verdict, decodesCleanly, judge, judgeSchema } from './values.ts';
import type { RawResponse } from './wire.ts';

/** Request heads up to this size must reach the app (the spec's 128 KiB, minus slack for Node's counting). */
export const HEAD_LIMIT = 128 * 1024;
const HEAD_SLACK = 512;

export interface Row {
  token: string; // hex digest
  record: string; // JSON text
  state: string; // JSON text of the lifecycle state kept beside the record
}

export interface Snapshot {
  ids: string[];
  /** The bots' IDs: the resource of the /admin/bots operations. */
  bots: string[];
  rows: Map<string, Row | undefined>;
}

export interface Exchange {
  spec: ApiSpec;
  draft: Draft;
  rendered: Rendered;
  headBytes: number;
  response: RawResponse;
  before: Snapshot;
  after: Snapshot;
  /** Current token per pool ID, as used by render. */
  tokenOf(id: string): string | undefined;
}

// ---------------------------------------------------------------------------------------------
// What was sent, as the server's query parser sees it

export interface SentParam {
  rawKey: string;
  rawValue: string | null;
  key: string;
  value: string;
}

/** Splits a raw query the way Node's querystring does, keeping the raw text of every pair. */
export function sentParams(rawQuery: string | undefined): SentParam[] {
  if (!rawQuery) return [];
  const out: SentParam[] = [];
  for (const segment of rawQuery.split('&')) {
    if (segment === '') continue;
    const parsed = querystring.parse(segment, '&', '=', { maxKeys: 0 });
    const key = Object.keys(parsed)[0];
    if (key === undefined) continue;
    const eq = segment.indexOf('=');
    out.push({
      rawKey: eq === -1 ? segment : segment.slice(0, eq),
      rawValue: eq === -1 ? null : segment.slice(eq + 1),
      key,
      value: String(parsed[key]),
    });
  }
  return out;
}

const WORST: Record<Verdict, number> = { valid: 0, unknown: 1, invalid: 2 };
const worst = (vs: Verdict[]): Verdict => vs.reduce<Verdict>((a, b) => (WORST[b] > WORST[a] ? b : a), 'valid');

/** A JSON value against a simple schema (objects, strings, numbers, booleans). */
export function judgeJson(schema: Schema, v: unknown): Verdict {
  const type = typeOf(schema);
  if (type === 'object') {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'invalid';
    const obj = v as Record<string, unknown>;
    const props = schema.properties ?? {};
    if ((schema.required ?? []).some((k) => !Object.hasOwn(obj, k))) return 'invalid';
    if (schema.additionalProperties === false && Object.keys(obj).some((k) => !Object.hasOwn(props, k))) return 'invalid';
    return worst(Object.entries(obj).map(([k, val]) => (props[k] ? judgeJson(props[k]!, val) : 'unknown')));
  }
  if (type === 'string') return typeof v === 'string' ? judgeSchema(schema, v) : 'invalid';
  if (type === 'integer' || type === 'number') return typeof v === 'number' ? judgeSchema(schema, String(v)) : 'invalid';
  if (type === 'boolean') return typeof v === 'boolean' ? 'valid' : 'invalid';
  return 'unknown';
}

export interface Facts {
  sent: SentParam[];
  /** Verdict per decoded query key. */
  queryVerdicts: Map<string, Verdict>;
  missingRequired: string[];
  pathVerdicts: Map<string, Verdict>;
  pathDecoded: Map<string, string | undefined>;
  /** Verdict per header parameter sent (lower-case name). */
  headerVerdicts: Map<string, Verdict>;
  bodyVerdict: Verdict | undefined;
  bodyJson: unknown;
  credential: 'absent' | 'match' | 'mismatch' | 'n/a';
  adminAuth: 'ok' | 'bad' | 'ambiguous' | 'n/a';
  overall: Verdict;
}

function judgePath(param: ParamSpec, raw: string): { verdict: Verdict; decoded: string | undefined } {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    // Not decodable: no value of a patterned/enumerated/typed parameter can look like that.
    const strict = !!(param.schema.pattern || param.schema.enum) || typeOf(param.schema) !== 'string';
    return { verdict: strict ? 'invalid' : 'unknown', decoded: undefined };
  }
  return { verdict: judgeSchema(param.schema, decoded), decoded };
}

export function factsOf(x: Pick<Exchange, 'draft' | 'rendered' | 'tokenOf'>): Facts {
  const { draft, rendered } = x;
  const op = draft.op;
  const sent = sentParams(rendered.rawQuery);
  const formatOk = new Set(draft.items.flatMap((it) => (it.formatOk === undefined ? [] : [it.formatOk])));
  const queryParams = op.params.filter((p) => p.in === 'query');
  const byKey = new Map<string, SentParam[]>();
  for (const s of sent) byKey.set(s.key, [...(byKey.get(s.key) ?? []), s]);

  const queryVerdicts = new Map<string, Verdict>();
  for (const [key, occurrences] of byKey) {
    const param = queryParams.find((p) => p.name === key);
    if (!param || occurrences.length > 1)
      queryVerdicts.set(key, 'invalid'); // unknown or repeated
    else queryVerdicts.set(key, judge(param, occurrences[0]!.value, occurrences[0]!.rawValue, formatOk));
  }
  const security = op.security.find((s) => s.kind === 'apiKeyQuery');
  const credentialName = security?.kind === 'apiKeyQuery' ? security.parameter : undefined;
  const missingRequired = queryParams.filter((p) => p.required && p.name !== credentialName && !byKey.has(p.name)).map((p) => p.name);
  // markRead's `platform` is optional in the schema only because a bot key implies it; with the token
  // (the credential this model sends) the operation requires it.
  if (op.operationId === 'markRead' && !byKey.has('platform')) missingRequired.push('platform');
  // A copy's ID is reported for a message named by its number.
  if (op.operationId === 'markRead' && byKey.has('message_id') && !byKey.has('message_number')) missingRequired.push('message_number');
  // A message is named by `number`, or by `platform` and `message_id`: exactly one way.
  if (NAMES_A_MESSAGE.includes(op.operationId)) {
    const [byNumber, byPlatform, byId] = [byKey.has('number'), byKey.has('platform'), byKey.has('message_id')];
    if (byNumber === (byPlatform || byId)) missingRequired.push('number');
    else if (byPlatform !== byId) missingRequired.push(byPlatform ? 'message_id' : 'platform');
  }
  // An edit changes at least one of the message's text, attachments or embed.
  if (op.operationId === 'editMessage' && !['message_content', 'message_attachments', 'message_embed'].some((k) => byKey.has(k))) {
    missingRequired.push('message_content');
  }

  const pathVerdicts = new Map<string, Verdict>();
  const pathDecoded = new Map<string, string | undefined>();
  for (const p of op.params.filter((q) => q.in === 'path')) {
    const choice = draft.path[p.name];
    const j =
      choice === undefined
        ? { verdict: 'invalid' as Verdict, decoded: undefined }
        : choice.kind === 'pool'
          ? { verdict: 'valid' as Verdict, decoded: choice.id }
          : judgePath(p, choice.raw);
    pathVerdicts.set(p.name, j.verdict);
    pathDecoded.set(p.name, j.decoded);
  }

  const headerVerdicts = new Map<string, Verdict>();
  for (const p of op.params.filter((q) => q.in === 'header')) {
    const sent = draft.headerParams.filter((h) => h.name.toLowerCase() === p.name.toLowerCase());
    if (sent.length === 0) {
      if (p.required) missingRequired.push(p.name);
      continue;
    }
    // Header values are not percent-decoded; an empty one is left open (some specs read it as absent).
    const value = sent[0]!.value;
    headerVerdicts.set(p.name.toLowerCase(), sent.length > 1 || value === '' ? 'unknown' : judgeSchema(p.schema, value));
  }

  let bodyVerdict: Verdict | undefined;
  let bodyJson: unknown;
  if (draft.body) {
    try {
      bodyJson = JSON.parse(draft.body.bytes.toString('utf8'));
    } catch {
      bodyJson = undefined;
    }
    if (!op.body)
      bodyVerdict = 'unknown'; // a body the operation does not take: ignoring or rejecting it are both defensible
    else if (draft.body.plainJson) bodyVerdict = bodyJson === undefined ? 'invalid' : judgeJson(op.body.schema, bodyJson);
    else bodyVerdict = 'unknown';
  } else if (op.body?.required) bodyVerdict = 'invalid';

  let credential: Facts['credential'] = 'n/a';
  if (credentialName) {
    const given = byKey.get(credentialName);
    if (!given || (given.length === 1 && given[0]!.value === '')) credential = 'absent';
    else {
      const pathId = rendered.pathId;
      const expected = pathId !== undefined ? x.tokenOf(pathId) : undefined;
      credential = given.length === 1 && expected !== undefined && given[0]!.value === expected ? 'match' : 'mismatch';
    }
  }
  const adminAuth: Facts['adminAuth'] =
    draft.adminAuth === undefined
      ? 'n/a'
      : draft.adminAuth === 'ok'
        ? 'ok'
        : ['lower-scheme', 'double-space'].includes(draft.adminAuth)
          ? 'ambiguous'
          : 'bad';

  const overall = worst([
    ...queryVerdicts.values(),
    ...pathVerdicts.values(),
    ...headerVerdicts.values(),
    ...(missingRequired.length ? ['invalid' as Verdict] : []),
    ...(bodyVerdict ? [bodyVerdict] : []),
  ]);
  return {
    sent,
    queryVerdicts,
    missingRequired,
    pathVerdicts,
    pathDecoded,
    headerVerdicts,
    bodyVerdict,
    bodyJson,
    credential,
    adminAuth,
    overall,
  };
}

// ---------------------------------------------------------------------------------------------
// Checks

const GENERIC_4XX = new Set([404, 405, 413, 414, 415, 431]);

function json(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Problem-document shape (invariant 2) for an app 4xx/5xx. */
export function problemViolations(spec: ApiSpec, status: number, res: RawResponse, rawPath: string | undefined): string[] {
  const v: string[] = [];
  const type = res.headers.get('content-type') ?? '';
  if (!/^application\/problem\+json\b/i.test(type))
    v.push(`${status} with content-type ${JSON.stringify(type)}, not application/problem+json`);
  const p = json(res.body) as Record<string, unknown> | undefined;
  if (!p || typeof p !== 'object' || Array.isArray(p)) return [...v, `${status} body is not a JSON object`];
  for (const k of ['type', 'title', 'detail', 'message'])
    if (typeof p[k] !== 'string') v.push(`problem member "${k}" missing or not a string`);
  if (p.status !== status) v.push(`problem status ${JSON.stringify(p.status)} differs from the HTTP status ${status}`);
  if (typeof p.detail === 'string' && p.message !== p.detail) v.push('problem "message" differs from "detail"');
  const kind = spec.problemKinds.get(status);
  if (kind && spec.problemTypeBase && p.type !== spec.problemTypeBase + kind)
    v.push(`problem type ${JSON.stringify(p.type)} for ${status}, spec says #${kind}`);
  if (rawPath !== undefined && p.instance !== undefined && p.instance !== rawPath)
    v.push(`problem instance ${JSON.stringify(p.instance)} is not the request path ${JSON.stringify(rawPath)}`);
  return v;
}

/** The `errors` of a 400 (invariant 3). */
function errorsViolations(x: Exchange, facts: Facts, problem: Record<string, unknown>): string[] {
  const v: string[] = [];
  const errors = problem.errors;
  if (!Array.isArray(errors) || errors.length === 0) return ['400 without a non-empty "errors" array naming the parameter'];
  const op = x.draft.op;
  const bodyKeys =
    facts.bodyJson && typeof facts.bodyJson === 'object' && !Array.isArray(facts.bodyJson) ? Object.keys(facts.bodyJson) : [];
  const schemaKeys = Object.keys(op.body?.schema.properties ?? {});
  for (const e of errors as Record<string, unknown>[]) {
    const { parameter, in: where, message } = e ?? {};
    if (typeof parameter !== 'string' || typeof message !== 'string' || !['query', 'path', 'header', 'body'].includes(String(where))) {
      v.push(`malformed errors item ${JSON.stringify(e)}`);
      continue;
    }
    // Which sent things (with their verdicts) could this item be about?
    const matches: Verdict[] = [];
    if (where === 'query') {
      for (const s of facts.sent) {
        if (parameter === s.key || parameter === s.rawKey || (s.key.includes('[') && parameter === s.key.slice(0, s.key.indexOf('[')))) {
          matches.push(facts.queryVerdicts.get(s.key) ?? 'unknown');
        }
      }
      if (facts.missingRequired.includes(parameter)) matches.push('invalid');
    } else if (where === 'path') {
      if (facts.pathVerdicts.has(parameter)) matches.push(facts.pathVerdicts.get(parameter)!);
    } else if (where === 'body') {
      const root = parameter.split(/[.[]/)[0]!;
      if (x.draft.body || op.body?.required) {
        if (parameter === 'body' || bodyKeys.includes(parameter) || bodyKeys.includes(root) || schemaKeys.includes(root))
          matches.push(facts.bodyVerdict ?? 'unknown');
      }
    } else if (where === 'header') {
      const name = parameter.toLowerCase();
      const sent = [...x.rendered.request.headers.map(([k]) => k.toLowerCase()), 'host', 'connection', 'content-length'];
      if (facts.headerVerdicts.has(name)) matches.push(facts.headerVerdicts.get(name)!);
      else if (sent.includes(name)) matches.push('unknown');
      if (facts.missingRequired.some((m) => m.toLowerCase() === name)) matches.push('invalid');
    }
    if (matches.length === 0) {
      v.push(`400 names ${where} parameter ${JSON.stringify(parameter)}, which the request does not hold (error: ${message})`);
    } else if (facts.overall === 'invalid' && matches.every((m) => m === 'valid')) {
      v.push(
        `400 names ${where} parameter ${JSON.stringify(parameter)}, whose value was valid, while an invalid one was sent (error: ${message})`,
      );
    }
  }
  return v;
}

/** Operations that name one logged message (by number, or by platform and ID). */
const NAMES_A_MESSAGE = ['getMessage', 'editMessage', 'deleteMessage'];

/** Statuses the request may get, from what was sent (invariant 4); undefined: anything not 5xx. */
export function expectedStatuses(
  op: OperationSpec,
  facts: Facts,
  x: Pick<Exchange, 'before' | 'rendered'>,
): { allowed: number[]; why: string } | undefined {
  const declared = op.responses.filter((r) => /^\d{3}$/.test(r)).map(Number);
  const success = declared.filter((s) => s >= 200 && s < 300);
  if (facts.overall === 'invalid') {
    // A missing or wrong credential may be noticed first, so 401 stays possible, unless the credential is right.
    const credentialRight = facts.credential === 'match' || facts.adminAuth === 'ok';
    return { allowed: [400, ...(credentialRight ? [] : [401]), 413, 414, 415, 431], why: 'the request holds a value the spec rejects' };
  }
  if (facts.credential === 'absent')
    return facts.overall === 'valid' ? { allowed: [401], why: 'no token' } : { allowed: [400, 401, 413, 415], why: 'no token' };
  if (facts.adminAuth === 'bad') return facts.overall === 'valid' ? { allowed: [401], why: 'wrong admin credentials' } : undefined;
  if (facts.overall !== 'valid' || facts.adminAuth === 'ambiguous') return undefined;
  // Everything valid from here on.
  if (facts.credential === 'mismatch') return { allowed: [401], why: 'well-formed token of another or no endpoint' };
  const readOnly = op.method === 'GET';
  const targetId = [...facts.pathDecoded.values()][0] ?? (facts.bodyJson as { id?: unknown } | undefined)?.id;
  const existing = op.path.startsWith('/admin/bots') ? x.before.bots : x.before.ids;
  const exists = typeof targetId === 'string' && existing.includes(targetId);
  if (facts.credential === 'match') {
    // 409: markRead named a message that is not pending (a rejection like 400: it must change nothing);
    // 404: the message named is not in the log (this model sends no messages first).
    const byRule = [400, ...declared.filter((s) => s === 409 || (s === 404 && NAMES_A_MESSAGE.includes(op.operationId)))];
    if (readOnly && NAMES_A_MESSAGE.includes(op.operationId))
      return { allowed: [...success, 404], why: 'valid read with its token (404: no such message)' };
    return readOnly
      ? { allowed: success, why: 'valid read with its token' }
      : { allowed: [...success, ...byRule], why: `valid request with its token (${byRule.join('/')}: the operation's rules)` };
  }
  if (declared.includes(409) && op.body && typeof targetId === 'string')
    return exists ? { allowed: [409], why: 'ID exists' } : { allowed: success, why: 'new ID' };
  if (declared.includes(404) && facts.pathDecoded.size > 0)
    return exists ? { allowed: success, why: 'ID exists' } : { allowed: [404], why: 'no such ID' };
  return {
    allowed: readOnly || facts.credential === 'n/a' ? success.concat(declared.filter((s) => s === 503)) : [...success, 400],
    why: 'valid request',
  };
}

function rowsChanged(before: Snapshot, after: Snapshot, except?: string): string[] {
  const changed: string[] = [];
  for (const [id, row] of before.rows) {
    if (id === except) continue;
    const now = after.rows.get(id);
    if (JSON.stringify(row) !== JSON.stringify(now)) changed.push(id);
  }
  return changed;
}

// Where updateEndpoint stores each scalar it overwrites (invariant 6).
const UPDATE_SCALARS: Record<string, (r: Record<string, any>) => unknown> = {
  log_chat_a: (r) => r.config.logs.chat_a,
  log_chat_b: (r) => r.config.logs.chat_b,
  log_chat_c: (r) => r.config.logs.chat_c,
  log_chat_d: (r) => r.config.logs.chat_d,
  message_author_name: (r) => r.meta.message.author.name,
  message_author_avatar: (r) => r.meta.message.author.avatar,
  message_author_id: (r) => r.meta.message.author.id,
  message_content: (r) => r.meta.message.content,
  message_reply_message: (r) => r.meta.message.reply.message,
  message_reply_author: (r) => r.meta.message.reply.author,
  sender_channel: (r) => r.meta['sender-channel'],
};

export function check(x: Exchange): string[] {
  const { response: res, draft, rendered, spec } = x;
  const op = draft.op;
  const v: string[] = [];
  const status = res.status;
  if (status >= 500) v.push(`server error ${status}`);

  if (res.fromParser) {
    if (x.headBytes <= HEAD_LIMIT - HEAD_SLACK)
      v.push(
        `Node's HTTP parser answered ${status} to a well-formed request whose head (${x.headBytes} bytes) is within the 128 KiB the spec promises`,
      );
    else if (![400, 414, 431].includes(status)) v.push(`oversized head answered ${status}`);
    v.push(...problemViolations(spec, status, res, undefined));
    if ((json(res.body) as { errors?: unknown } | undefined)?.errors !== undefined)
      v.push("the parser's answer lists parameters it never read");
    if (rowsChanged(x.before, x.after).length) v.push('the parser rejected the request, yet a record changed');
    return v;
  }
  if (x.headBytes > HEAD_LIMIT + HEAD_SLACK && status < 400) v.push(`a ${x.headBytes}-byte head was accepted (${status})`);

  const facts = factsOf(x);
  const body = json(res.body);
  if (status >= 400) {
    v.push(...problemViolations(spec, status, res, rendered.rawPath));
    if (status === 400 && body && typeof body === 'object') v.push(...errorsViolations(x, facts, body as Record<string, unknown>));
  }

  const declared = op.responses.filter((r) => /^\d{3}$/.test(r)).map(Number);
  if (!declared.includes(status) && !op.responses.includes('default') && !GENERIC_4XX.has(status))
    v.push(`status ${status} is not declared for ${op.operationId}`);

  const expected = expectedStatuses(op, facts, x);
  if (expected && !expected.allowed.includes(status)) v.push(`status ${status}, expected ${expected.allowed.join('/')} (${expected.why})`);

  // Invariant 5: state.
  const ok = status >= 200 && status < 300;
  const idsChanged = JSON.stringify(x.before.ids) !== JSON.stringify(x.after.ids);
  if (!ok || op.method === 'GET') {
    const changed = rowsChanged(x.before, x.after);
    if (changed.length) v.push(`${ok ? 'a GET' : `a rejected request (${status})`} changed the stored row(s) of ${changed.join(', ')}`);
    if (idsChanged) v.push(`${ok ? 'a GET' : `a rejected request (${status})`} changed the list of endpoints`);
  } else {
    const idIn = (v: unknown) =>
      v && typeof v === 'object' && typeof (v as { id?: unknown }).id === 'string' ? (v as { id: string }).id : undefined;
    // The endpoint addressed: by the path, else by the body (createEndpoint), else as the answer names it.
    const addressed = [...facts.pathDecoded.values()][0] ?? idIn(facts.bodyJson) ?? idIn(body);
    const changed = rowsChanged(x.before, x.after, addressed);
    if (changed.length) v.push(`a ${status} for ${addressed ?? 'no endpoint'} changed the row(s) of ${changed.join(', ')}`);
    const added = x.after.ids.filter((id) => !x.before.ids.includes(id));
    const removed = x.before.ids.filter((id) => !x.after.ids.includes(id));
    if ([...added, ...removed].some((id) => id !== addressed))
      v.push(`a ${status} for ${addressed} added ${JSON.stringify(added)} and removed ${JSON.stringify(removed)}`);
    if (op.security.some((s) => s.kind === 'apiKeyQuery')) {
      const row = addressed !== undefined ? x.after.rows.get(addressed) : undefined;
      if (x.before.rows.get(addressed ?? '')?.token !== row?.token) v.push('an endpoint operation changed the token digest');
      if (status === 200) {
        const isJson = /^application\/json\b/i.test(res.headers.get('content-type') ?? '');
        if (!row) v.push('200 for an endpoint that is not stored');
        else if (isJson && JSON.stringify(body) !== row.record && !showsOlderQueuedMessage(body, row, res))
          v.push('the 200 record differs from the stored record');
        if (op.operationId === 'updateEndpoint' && row) v.push(...roundTrip(x, facts, row));
      }
    }
  }
  return v;
}

/**
 * A record answered as its reader sees it (markRead, only_check): while older messages are unread, its
 * `meta` shows the one `Chatbridge-Message-Number` names instead of the newest (which the stored record
 * holds). That message must still be in the stored queue, and the config must be the stored one.
 */
function showsOlderQueuedMessage(body: unknown, row: Row, res: RawResponse): boolean {
  const shown = Number(res.headers.get('chatbridge-message-number') ?? Number.NaN);
  const state = JSON.parse(row.state) as { seq: number; queue?: { n: number }[] } | null;
  if (!state || !Number.isInteger(shown) || shown === state.seq || !state.queue?.some((m) => m.n === shown)) return false;
  const answered = body as { config?: unknown; meta?: { trigger?: unknown } } | null;
  const stored = JSON.parse(row.record) as { config: unknown };
  return JSON.stringify(answered?.config) === JSON.stringify(stored.config) && answered?.meta?.trigger === true;
}

/** updateEndpoint: every scalar sent is stored as sent (unless only_check, or a lifecycle step may clear it). */
function roundTrip(x: Exchange, facts: Facts, row: Row): string[] {
  const single = (k: string) => facts.sent.filter((s) => s.key === k);
  if (single('only_check').some((s) => s.value === 'true')) return [];
  if (single('trigger').length || single('sender').length) return [];
  const before = x.before.rows.get(x.rendered.pathId ?? '');
  if (!before || (JSON.parse(before.record) as { meta: { trigger: boolean } }).meta.trigger) return [];
  const record = JSON.parse(row.record) as Record<string, unknown>;
  const v: string[] = [];
  for (const [name, read] of Object.entries(UPDATE_SCALARS)) {
    const given = single(name);
    if (given.length !== 1 || facts.queryVerdicts.get(name) !== 'valid' || !decodesCleanly(given[0]!.rawValue ?? '')) continue;
    const stored = read(record);
    if (stored !== given[0]!.value)
      v.push(
        `200, but ${name} was stored as ${JSON.stringify(stored)?.slice(0, 80)} instead of the ${JSON.stringify(given[0]!.value).slice(0, 80)} sent`,
      );
  }
  return v;
}
