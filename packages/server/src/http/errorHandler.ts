// The one error handler: every error becomes a problem document. Validator errors are translated so
// that each offending parameter is named, together with the issues the validator leaves to us (see
// request/queryNames.ts); anything unexpected is logged and answered 500 without internal detail.
import type { ErrorRequestHandler, Request } from 'express';
import type { Issue } from '../domain/issues.ts';
import type { Logger } from '../logger.ts';
import { StoreUnavailableError } from '../store/unavailable.ts';
import {
  ADMIN_UNAUTHORIZED_DETAIL,
  KEY_OR_ADMIN_UNAUTHORIZED_DETAIL,
  HttpProblem,
  type RefinedProblem,
  UNAUTHORIZED_DETAIL,
  challengeFor,
  invalid,
  isAdminPath,
  isProblemStatus,
  problemFor,
  type ProblemStatus,
} from './problem.ts';
import { issueFromValidator, onePerParameter, type ValidatorErrorItem } from './request/validatorIssues.ts';
import { openapiOf } from './operations.ts';

/**
 * Whether the request's credential is the admin bearer token: the admin API's paths, and operations
 * elsewhere that the spec secures with it (lookupEndpoints).
 */
const takesAdminBearer = (req: Request) => isAdminPath(req.path) || (openapiOf(req).schema?.security ?? []).some((s) => 'adminBearer' in s);

/** The 401 text of the request's operation: which credential it takes (the same whatever was wrong with it). */
export function unauthorizedDetail(req: Request): string {
  if (!takesAdminBearer(req)) return UNAUTHORIZED_DETAIL;
  const schemes = (openapiOf(req).schema?.security ?? []).flatMap((s) => Object.keys(s));
  return schemes.includes('botKey') ? KEY_OR_ADMIN_UNAUTHORIZED_DETAIL : ADMIN_UNAUTHORIZED_DETAIL;
}

interface Answer {
  status: ProblemStatus;
  detail: string;
  errors?: Issue[];
  unexpected?: boolean;
  retryAfterSeconds?: number;
  /** For a 405: the methods the path has (RFC 9110 requires the header). */
  allow?: string;
  refined?: RefinedProblem;
}

const fromHttpProblem = (p: HttpProblem): Answer => ({
  status: p.status,
  detail: p.message,
  ...(p.errors && { errors: p.errors }),
  ...(p.refined && { refined: p.refined }),
});

/** Issues of a request that the validator does not check itself, reported beside its own. */
export type IssuesBesideValidator = (req: Request) => Issue[];

function toProblem(err: unknown, req: Request, besideValidator: IssuesBesideValidator): Answer {
  if (err instanceof HttpProblem) return fromHttpProblem(err);
  if (err instanceof StoreUnavailableError)
    return { status: 503, detail: 'The store is unavailable; retry shortly.', retryAfterSeconds: 1 };
  const e = err as {
    status?: number;
    statusCode?: number;
    type?: string;
    errors?: ValidatorErrorItem[];
    message?: string;
    headers?: { Allow?: unknown };
  };
  const status = e.status ?? e.statusCode ?? 500;
  if (e.type === 'entity.parse.failed') return fromHttpProblem(invalid([{ parameter: 'body', in: 'body', message: 'is not valid JSON' }]));
  if (e.type === 'entity.too.large') return { status: 413, detail: 'The request body is too large.' };
  if (status === 400 && Array.isArray(e.errors)) {
    const issues = [...besideValidator(req), ...e.errors.map((item) => issueFromValidator(item, req))];
    return fromHttpProblem(invalid(onePerParameter(issues)));
  }
  // body-parser: a body that cannot be decoded (bad compression, charset) or read.
  if (status === 400) return fromHttpProblem(invalid([{ parameter: 'body', in: 'body', message: 'could not be decoded' }]));
  if (status === 415 && e.type === 'encoding.unsupported') return { status: 415, detail: 'Unsupported Content-Encoding.' };
  if (status === 401 || status === 403) return { status: 401, detail: unauthorizedDetail(req) };
  if (status === 404) return { status: 404, detail: 'No operation is defined at this path.' };
  if (status === 405) {
    const declared = typeof e.headers?.Allow === 'string' ? e.headers.Allow.toUpperCase() : undefined;
    // Every GET is also answered as HEAD (http/request/headAsGet.ts), so a path that has GET allows HEAD too.
    const allow = declared && /\bGET\b/.test(declared) && !/\bHEAD\b/.test(declared) ? `${declared}, HEAD` : declared;
    return {
      status: 405,
      detail: `This method is not allowed at this path${allow ? `; it allows ${allow}` : ''}.`,
      ...(allow && { allow }),
    };
  }
  if (status === 413) return { status: 413, detail: 'The request is too large.' };
  if (status === 415) return { status: 415, detail: 'Send application/json.' };
  if (isProblemStatus(status) && status < 500) return { status, detail: 'The request was not accepted.' };
  return { status: 500, detail: 'An unexpected error occurred; it has been logged.', unexpected: true };
}

export function problemErrorHandler(logger: Logger, besideValidator: IssuesBesideValidator = () => []): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const p = toProblem(err, req, besideValidator);
    if (p.unexpected) (req.log ?? logger).error({ err }, 'unexpected error');
    else if (p.status === 503)
      (req.log ?? logger).warn({ err: { message: (err as Error).message, cause: String((err as Error).cause) } }, 'store unavailable');
    if (res.headersSent) return;
    if (p.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(p.retryAfterSeconds));
    if (p.allow !== undefined) res.setHeader('Allow', p.allow);
    if (p.status === 401) res.setHeader('WWW-Authenticate', challengeFor(takesAdminBearer(req)));
    res
      .status(p.status)
      .type('application/problem+json')
      .json(problemFor(p.status, p.detail, req.path, p.errors, p.refined));
  };
}
