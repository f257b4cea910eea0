// express-openapi-validator's error items as issues that name the offending parameter or body member
// the way the request wrote it.
import type { Request } from 'express';
import type { Issue } from '../../domain/issues.ts';
import { CONTROL_CHARACTERS_PROBLEM, NO_CONTROL_CHARACTERS_PATTERN } from '../../domain/text.ts';
import { decodeQueryComponent, rawQueryPairs } from './queryText.ts';

/** The validator's message for a text parameter holding a control character (see domain/text.ts). */
const CONTROL_CHARACTERS_MESSAGE = `must match pattern "${NO_CONTROL_CHARACTERS_PATTERN}"`;

export interface ValidatorErrorItem {
  path?: string;
  message?: string;
  /** `<ajv keyword>.openapi.validation` for the schema's findings. */
  errorCode?: string;
}

const LOCATIONS: Record<string, Issue['in']> = { query: 'query', params: 'path', path: 'path', body: 'body', headers: 'header' };

/** Keywords whose error names a member: the validator appends that member's name to ajv's path. */
const MEMBER_KEYWORDS = new Set(['required', 'additionalProperties', 'unevaluatedProperties']);

/** RFC 3986's reserved characters, which the validator refuses raw in parameters without allowReserved. */
const RESERVED_CHARACTER = /[:/?#[\]@!$&'()*+,;=]/;

/** A JSON-pointer segment as the name it stands for ("~1" is "/", "~0" is "~"). */
const unescapeSegment = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~');

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/**
 * The segments of a member's path in the body, from what the validator reports: ajv's pointer to the
 * object (escaped), then `/` and the member's name as it is, not escaped (so `a/b` reads as two
 * segments). The pointer is read against the body the request sent: at each object, a member whose
 * name is the whole rest of the pointer is the one meant; otherwise one escaped segment is followed.
 * A member that is absent (a missing required property) is named by the rest of the pointer.
 */
export function memberSegments(pointer: string, body: unknown): string[] {
  const segments: string[] = [];
  let node = body;
  let rest = pointer;
  for (;;) {
    if (isObject(node) && Object.hasOwn(node, rest)) return [...segments, rest];
    const slash = rest.indexOf('/');
    if (slash === -1) return [...segments, rest];
    const segment = unescapeSegment(rest.slice(0, slash));
    segments.push(segment);
    node = isObject(node) ? node[segment] : undefined;
    rest = rest.slice(slash + 1);
  }
}

/** Whether the raw (undecoded) value of query parameter `name` holds a `+`. */
function rawValueHasPlus(req: Request, name: string): boolean {
  const q = req.originalUrl.indexOf('?');
  if (q === -1) return false;
  return rawQueryPairs(req.originalUrl.slice(q + 1)).some(
    (pair) => decodeQueryComponent(pair.key) === name && (pair.value ?? '').includes('+'),
  );
}

/**
 * The validator reports JSON pointers (`/query/<name>`, `/body/<member>/...`) or dotted paths
 * (`.query.<name>`). A body path becomes dotted (`fields.0.name`), its segments unescaped, so names
 * holding `/` or `~` survive.
 */
export function issueFromValidator(item: ValidatorErrorItem, req: Request): Issue {
  // The validator says "must be url encoded" of a raw reserved character, but every parameter without
  // allowReserved refuses that character however it is encoded (a token, a cursor, an enum, a number),
  // and encodeURIComponent leaves `!'()*` as they are: name the character instead.
  const reserved = /^Parameter '(.*)' must be url encoded\./s.exec(item.message ?? '');
  if (reserved) {
    const value = (req.query as Record<string, unknown>)[reserved[1]!];
    // A raw `+` is decoded to a space before anyone looks, so it is named from the raw query.
    const character =
      typeof value === 'string'
        ? (RESERVED_CHARACTER.exec(value)?.[0] ?? (rawValueHasPlus(req, reserved[1]!) ? '+' : undefined))
        : undefined;
    if (character) return { parameter: reserved[1]!, in: 'query', message: `must not contain '${character}'` };
  }
  // The text parameters' pattern is a character class no reader should have to decode.
  const message = item.message === CONTROL_CHARACTERS_MESSAGE ? CONTROL_CHARACTERS_PROBLEM : (item.message ?? 'is invalid');
  const path = item.path ?? '';
  const namesMember = MEMBER_KEYWORDS.has(item.errorCode?.split('.')[0] ?? '');
  // The validator drops an empty member name together with the path to it; only the body has members.
  if (namesMember && path === '') return { parameter: '', in: 'body', message };
  const m = /^[./]?(query|params|path|body|headers)(?:[./](.*))?$/s.exec(path);
  const place = LOCATIONS[m?.[1] ?? ''] ?? 'query';
  const rest = m?.[2]; // undefined: the location itself ("/body")
  const pointer = path.startsWith('/');
  let parameter: string;
  if (place === 'body') {
    if (rest === undefined) parameter = 'body';
    else if (!pointer) parameter = rest;
    else parameter = (namesMember ? memberSegments(rest, req.body) : rest.split('/').map(unescapeSegment)).join('.');
  } else {
    parameter = (pointer && rest ? unescapeSegment(rest) : rest) || (place === 'path' ? 'endpoint' : 'request');
  }
  const repeated = place === 'query' && Array.isArray((req.query as Record<string, unknown>)[parameter]);
  return { parameter, in: place, message: repeated ? 'was given more than once' : message };
}

/** The validator reports every failed rule (allErrors); a parameter is named once, with its first. */
export function onePerParameter(issues: Issue[]): Issue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.in}\u0000${issue.parameter}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
