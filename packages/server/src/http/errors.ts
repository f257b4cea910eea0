// The one error handler: every error becomes a problem document. Validator errors are translated so
// that each offending parameter is named; anything unexpected is logged and answered 500 without
// internal detail.
import type { ErrorRequestHandler, Request } from 'express';
import type { Issue } from '../domain/issues.ts';
import { CONTROL_CHARACTERS_PROBLEM, NO_CONTROL_CHARACTERS_PATTERN } from '../domain/text.ts';
import type { Logger } from '../logger.ts';
import { StoreUnavailableError } from '../store/unavailable.ts';
import { decodeQueryComponent, rawQueryPairs } from './queryText.ts';
import {
  ADMIN_UNAUTHORIZED_DETAIL,
  HttpProblem,
  UNAUTHORIZED_DETAIL,
  challengeFor,
  invalid,
  isAdminPath,
  isProblemStatus,
  problemFor,
  type ProblemStatus,
} from './problem.ts';

interface ValidatorErrorItem {
  path?: string;
  message?: string;
}

/** The validator's message for a text parameter holding a control character (see domain/text.ts). */
const CONTROL_CHARACTERS_MESSAGE = `must match pattern "${NO_CONTROL_CHARACTERS_PATTERN}"`;

const LOCATIONS: Record<string, Issue['in']> = { query: 'query', params: 'path', path: 'path', body: 'body', headers: 'header' };

/** Whether the raw (undecoded) value of query parameter `name` holds a `+`. */
function rawValueHasPlus(req: Request, name: string): boolean {
  const q = req.originalUrl.indexOf('?');
  if (q === -1) return false;
  return rawQueryPairs(req.originalUrl.slice(q + 1)).some((pair) => decodeQueryComponent(pair.key) === name && (pair.value ?? '').includes('+'));
}

/** RFC 3986's reserved characters, which the validator refuses raw in parameters without allowReserved. */
const RESERVED_CHARACTER = /[:/?#[\]@!$&'()*+,;=]/;

/** A JSON-pointer segment as the name it stands for ("~1" is "/", "~0" is "~"). */
const unescapeSegment = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~');

/**
 * express-openapi-validator reports JSON pointers: `/query/<name>`, `/body/<member>/...` (our patch
 * escapes the member names it appends, as ajv does the rest), or `.query.<name>`. A body path becomes
 * dotted (`fields.0.name`), its segments unescaped, so names holding `.`, `/` or nothing survive; an
 * unknown parameter is named from the message, which quotes it exactly.
 */
function issueFromValidator(item: ValidatorErrorItem, req: Request): Issue {
  const unknown = /^Unknown query parameter '(.*)'$/s.exec(item.message ?? '');
  if (unknown) return { parameter: unknown[1]!, in: 'query', message: 'unknown parameter' };
  // The validator says "must be url encoded" of a raw reserved character, but every parameter without
  // allowReserved refuses that character however it is encoded (a token, a cursor, an enum, a number),
  // and encodeURIComponent leaves `!'()*` as they are: name the character instead.
  const reserved = /^Parameter '(.*)' must be url encoded\./s.exec(item.message ?? '');
  if (reserved) {
    const value = (req.query as Record<string, unknown>)[reserved[1]!];
    // A raw `+` is decoded to a space before anyone looks, so it is named from the raw query.
    const character = typeof value === 'string' ? (RESERVED_CHARACTER.exec(value)?.[0] ?? (rawValueHasPlus(req, reserved[1]!) ? '+' : undefined)) : undefined;
    if (character) return { parameter: reserved[1]!, in: 'query', message: `must not contain '${character}'` };
  }
  const path = item.path ?? '';
  // The text parameters' pattern is a character class no reader should have to decode.
  const message = item.message === CONTROL_CHARACTERS_MESSAGE ? CONTROL_CHARACTERS_PROBLEM : item.message;
  const m = /^[./]?(query|params|path|body|headers)(?:[./](.*))?$/s.exec(path);
  const place = LOCATIONS[m?.[1] ?? ''] ?? 'query';
  const rest = m?.[2]; // undefined: the location itself ("/body"); "": a member named ""
  const pointer = path.startsWith('/');
  const parameter =
    place === 'body'
      ? rest === undefined
        ? 'body'
        : pointer
          ? rest.split('/').map(unescapeSegment).join('.')
          : rest
      : (pointer && rest ? unescapeSegment(rest) : rest) || (place === 'path' ? 'endpoint' : 'request');
  const repeated = place === 'query' && Array.isArray((req.query as Record<string, unknown>)[parameter]);
  return { parameter, in: place, message: repeated ? 'was given more than once' : (message ?? 'is invalid') };
}

/** The validator reports every failed rule (allErrors); a parameter is named once, with its first. */
function onePerParameter(issues: Issue[]): Issue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.in}\u0000${issue.parameter}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

interface Answer {
  status: ProblemStatus;
  detail: string;
  errors?: Issue[];
  unexpected?: boolean;
  retryAfterSeconds?: number;
  /** For a 405: the methods the path has (RFC 9110 requires the header). */
  allow?: string;
}

const fromHttpProblem = (p: HttpProblem): Answer => ({ status: p.status, detail: p.message, ...(p.errors && { errors: p.errors }) });

function toProblem(err: unknown, req: Request): Answer {
  if (err instanceof HttpProblem) return fromHttpProblem(err);
  if (err instanceof StoreUnavailableError) return { status: 503, detail: 'The store is unavailable; retry shortly.', retryAfterSeconds: 1 };
  const e = err as { status?: number; statusCode?: number; type?: string; errors?: ValidatorErrorItem[]; message?: string; headers?: { Allow?: unknown } };
  const status = e.status ?? e.statusCode ?? 500;
  if (e.type === 'entity.parse.failed') return fromHttpProblem(invalid([{ parameter: 'body', in: 'body', message: 'is not valid JSON' }]));
  if (e.type === 'entity.too.large') return { status: 413, detail: 'The request body is too large.' };
  if (status === 400 && Array.isArray(e.errors)) return fromHttpProblem(invalid(onePerParameter(e.errors.map((item) => issueFromValidator(item, req)))));
  // body-parser: a body that cannot be decoded (bad compression, charset) or read.
  if (status === 400) return fromHttpProblem(invalid([{ parameter: 'body', in: 'body', message: 'could not be decoded' }]));
  if (status === 415 && e.type === 'encoding.unsupported') return { status: 415, detail: 'Unsupported Content-Encoding.' };
  if (status === 401 || status === 403) {
    return { status: 401, detail: isAdminPath(req.path) ? ADMIN_UNAUTHORIZED_DETAIL : UNAUTHORIZED_DETAIL };
  }
  if (status === 404) return { status: 404, detail: 'No operation is defined at this path.' };
  if (status === 405) {
    const declared = typeof e.headers?.Allow === 'string' ? e.headers.Allow.toUpperCase() : undefined;
    // Every GET is also answered as HEAD (app.ts), so a path that has GET allows HEAD too.
    const allow = declared && /\bGET\b/.test(declared) && !/\bHEAD\b/.test(declared) ? `${declared}, HEAD` : declared;
    return { status: 405, detail: `This method is not allowed at this path${allow ? `; it allows ${allow}` : ''}.`, ...(allow && { allow }) };
  }
  if (status === 413) return { status: 413, detail: 'The request is too large.' };
  if (status === 415) return { status: 415, detail: 'Send application/json.' };
  if (isProblemStatus(status) && status < 500) return { status, detail: 'The request was not accepted.' };
  return { status: 500, detail: 'An unexpected error occurred; it has been logged.', unexpected: true };
}

export function problemErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const p = toProblem(err, req);
    if (p.unexpected) (req.log ?? logger).error({ err }, 'unexpected error');
    else if (p.status === 503) (req.log ?? logger).warn({ err: { message: (err as Error).message, cause: String((err as Error).cause) } }, 'store unavailable');
    if (res.headersSent) return;
    if (p.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(p.retryAfterSeconds));
    if (p.allow !== undefined) res.setHeader('Allow', p.allow);
    if (p.status === 401) res.setHeader('WWW-Authenticate', challengeFor(req.path));
    res.status(p.status).type('application/problem+json').json(problemFor(p.status, p.detail, req.path, p.errors));
  };
}
