// RFC 9457 problem documents. Every error leaving the server goes through `problemFor`, so clients
// always get application/problem+json with `type`, `title`, `status`, `detail` and `message`.
import type { components } from '@chatbridge/api';
import type { Issue } from '../domain/issues.ts';

export const PROBLEM_BASE = 'https://chatbridge.dev/problems#';

const KINDS = {
  400: ['validation', 'Invalid request'],
  401: ['unauthorized', 'Unauthorized'],
  403: ['forbidden', 'Forbidden'],
  404: ['not-found', 'Not found'],
  405: ['method-not-allowed', 'Method not allowed'],
  408: ['request-timeout', 'Request timeout'],
  409: ['conflict', 'Conflict'],
  413: ['payload-too-large', 'Payload too large'],
  415: ['unsupported-media-type', 'Unsupported media type'],
  417: ['expectation-failed', 'Expectation failed'],
  429: ['rate-limited', 'Too many requests'],
  431: ['header-too-large', 'Request header fields too large'],
  500: ['internal', 'Internal server error'],
  503: ['unavailable', 'Service unavailable'],
} as const;

export type ProblemStatus = keyof typeof KINDS;

/**
 * Problems a client tells apart by more than the status: each its own `type` (and title), so a bot
 * can act on it without reading the detail.
 */
export const REFINED = {
  'no-such-message': [404, 'No such message'],
  'duplicate-message-id': [409, 'Duplicate message ID'],
  'message-deleted': [409, 'Message deleted'],
  'edit-limit': [409, 'Edit limit reached'],
} as const satisfies Record<string, readonly [ProblemStatus, string]>;

export type RefinedProblem = keyof typeof REFINED;

/** The problem document as the spec declares it. */
export type Problem = components['schemas']['Problem'];

/** An error a handler throws to answer with a problem document. */
export class HttpProblem extends Error {
  readonly status: ProblemStatus;
  readonly errors: Issue[] | undefined;
  readonly refined: RefinedProblem | undefined;
  constructor(status: ProblemStatus, detail: string, errors?: Issue[], refined?: RefinedProblem) {
    super(detail);
    this.status = status;
    this.errors = errors;
    this.refined = refined;
  }
}

/** A problem of a refined type (REFINED), with its status. */
export const refinedProblem = (refined: RefinedProblem, detail: string) => new HttpProblem(REFINED[refined][0], detail, undefined, refined);

export const UNAUTHORIZED_DETAIL = 'The token is missing or not valid for this endpoint.';
export const unauthorized = () => new HttpProblem(401, UNAUTHORIZED_DETAIL);

export const ADMIN_UNAUTHORIZED_DETAIL = 'The admin token is missing or wrong.';
/** For an operation that takes a bot key or the admin token: which one was meant is not told. */
export const KEY_OR_ADMIN_UNAUTHORIZED_DETAIL = 'The bot key or admin token is missing or wrong.';

/**
 * The `WWW-Authenticate` challenge every 401 carries (RFC 9110 requires one). Admin operations and
 * lookupEndpoints take the admin bearer token (RFC 6750); endpoint operations take the token in the
 * query string, for which no
 * scheme is registered, so the challenge names it the way the spec's `apiKey` scheme does.
 */
export const challengeFor = (adminBearer: boolean) =>
  adminBearer ? 'Bearer realm="chatbridge-admin"' : 'ApiKey realm="chatbridge", in="query", name="token"';

/**
 * The admin API's paths, in any letter case: routing and the validator match paths without regard
 * to case, so `/ADMIN/endpoints` reaches the admin operations and must be treated as them. `/admin`
 * and `/admin/` are not: they are the record of an endpoint named `admin`.
 */
export const isAdminPath = (path: string) => /^\/admin\/[^/]/i.test(path);

/** At most this many issues are listed, so a flood of bad parameters cannot inflate the answer. */
const MAX_ISSUES = 25;

/** Each parameter once (the spec's promise): the messages of a parameter named twice are joined. */
function oncePerParameter(issues: Issue[]): Issue[] {
  const byKey = new Map<string, Issue>();
  for (const issue of issues) {
    const key = `${issue.in}\u0000${issue.parameter}`;
    const first = byKey.get(key);
    if (!first) byKey.set(key, { ...issue });
    else if (!first.message.split('; ').includes(issue.message)) first.message += `; ${issue.message}`;
  }
  return [...byKey.values()];
}

/** A valid credential that may not do this; `errors` names the parameters (as many as a 400 lists). */
export const forbidden = (detail: string, errors?: Issue[]) => new HttpProblem(403, detail, errors?.slice(0, MAX_ISSUES));

export function invalid(all: Issue[]): HttpProblem {
  const issues = oncePerParameter(all);
  const listed = issues.slice(0, MAX_ISSUES);
  const more = issues.length - listed.length;
  const detail = listed.map((i) => `${i.parameter}: ${i.message}`).join('; ') + (more > 0 ? `; and ${more} more` : '');
  return new HttpProblem(400, detail, listed);
}

export function problemFor(status: ProblemStatus, detail: string, instance?: string, errors?: Issue[], refined?: RefinedProblem): Problem {
  const [kind, title] = refined === undefined ? KINDS[status] : [refined, REFINED[refined][1]];
  return {
    type: PROBLEM_BASE + kind,
    title,
    status,
    detail,
    message: detail,
    ...(instance === undefined ? {} : { instance }),
    ...(errors === undefined ? {} : { errors }),
  };
}

export const isProblemStatus = (s: number): s is ProblemStatus => s in KINDS;
