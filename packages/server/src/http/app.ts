// createApp builds the Express app and never listens. Order: request log and metrics, security
// headers, CORS, the body parser, request hygiene, then express-openapi-validator as its README wires
// it (security presence, parameters, responses) and the query names it leaves to us (queryNames.ts),
// the check of the credential's kind (a token or a bot key, http/auth/authenticate.ts),
// on PostgreSQL the read-ahead of getEndpoint's endpoint, rate limits, dispatch by operationId (admin
// operations check the admin token there), all of it behind one Express layer (pipeline.ts); then a
// problem+json 404 for anything unmatched, and one error handler for every error.
import cors from 'cors';
import express, { type Express, type RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { bundledSpecPath } from '@chatbridge/api';
import { buildHandlers } from '../handlers/index.ts';
import { credentialCheck, credentialPresence, presentsAdminToken } from './auth/authenticate.ts';
import type { AppDeps } from './deps.ts';
import { problemErrorHandler } from './errorHandler.ts';
import { queryNameCheck } from './request/queryNames.ts';
import { inOneLayer } from './pipeline.ts';
import { readAhead } from './request/readAhead.ts';
import { type CompletionObserver, requestLog } from './observe/requestLog.ts';
import { JSON_API_HEADERS, securityHeaders } from './transport/securityHeaders.ts';
import { parseQueryOnce, pathTemplatesOf, queryParser, queryNamesOfType, requestHygiene } from './request/hygiene.ts';
import { type Handlers, type OperationId, openapiOf } from './operations.ts';
import { ADMIN_UNAUTHORIZED_DETAIL, HttpProblem, isAdminPath } from './problem.ts';

/**
 * HEAD is GET without a body (RFC 9110 §9.3.2): load balancers probe `HEAD /-/live`. The spec lists
 * GET only, so the request is validated and answered as its GET; Node sends no body for a HEAD
 * request whatever the handler writes (the response knows its request's method from the start).
 */
const answerHeadAsGet: RequestHandler = (req, res, next) => {
  if (req.method === 'HEAD') {
    req.method = 'GET';
    res.locals.head = true; // for answers that would never end by themselves (the event stream)
  }
  next();
};

/**
 * Counts and times every request by the operationId the validator matched (an observer of the request
 * log's completion). The metric children of each (operation, status) are looked up once: prom-client
 * hashes a label object on every call.
 */
function requestMetrics({ metrics }: AppDeps): CompletionObserver {
  type Children = {
    count: ReturnType<AppDeps['metrics']['httpRequests']['labels']>;
    duration: ReturnType<AppDeps['metrics']['httpDuration']['labels']>;
  };
  const children = new Map<string, Children>(); // a few operations times a few statuses
  const childrenOf = (operation: string, status: number) => {
    const key = `${operation} ${status}`;
    let found = children.get(key);
    if (!found) {
      found = { count: metrics.httpRequests.labels(operation, String(status)), duration: metrics.httpDuration.labels(operation) };
      children.set(key, found);
    }
    return found;
  };
  return (req, res, elapsedMs) => {
    const { count, duration } = childrenOf(openapiOf(req).schema?.operationId ?? 'unmatched', res.statusCode);
    count.inc();
    duration.observe(elapsedMs / 1000);
  };
}

/**
 * CORS is off unless the operator lists origins: bots call from servers, and a browser page holding
 * an endpoint token is the exception. The admin API never answers cross-origin requests.
 */
function corsPolicy({ corsOrigins }: AppDeps): RequestHandler {
  // A page may read the headers the contract gives meaning to, not only the CORS-safelisted ones.
  const exposedHeaders = [
    'Chatbridge-Message-Number',
    'RateLimit-Limit',
    'RateLimit-Remaining',
    'RateLimit-Reset',
    'Retry-After',
    'X-Request-Id',
    'WWW-Authenticate',
  ];
  const allow = cors({ origin: corsOrigins, methods: ['GET', 'POST'], maxAge: 600, exposedHeaders });
  return (req, res, next) => (isAdminPath(req.path) ? next() : allow(req, res, next));
}

/**
 * Runs the operation the validator matched. Operations whose only security is `adminBearer` need the
 * operator's admin token first: checked here, not in a layer of its own that every request crosses.
 * An operation that also takes a bot key (lookupEndpoints) checks either in its handler.
 */
function dispatch(handlers: Handlers, adminTokenHash: Uint8Array | undefined): RequestHandler {
  return (req, res, next) => {
    const schema = openapiOf(req).schema;
    const operationId = schema?.operationId as OperationId | undefined;
    if (!operationId) return next();
    if (schema?.security?.length && schema.security.every((s) => 'adminBearer' in s) && !presentsAdminToken(req, adminTokenHash)) {
      return next(new HttpProblem(401, ADMIN_UNAUTHORIZED_DETAIL));
    }
    return handlers[operationId](req, res); // Express 5 passes a rejection to the error handler
  };
}

/**
 * JSON bodies are parsed for the admin API only, the one API that takes them. The record operations
 * never read a body, as with the original service: bots that also send their parameters as one
 * (`requests.post(url, params=p, json=p)`) keep working whatever its size or content.
 */
function adminJsonBodies(): RequestHandler {
  const parse = express.json({ limit: '16kb' });
  return (req, res, next) => (isAdminPath(req.path) ? parse(req, res, next) : next());
}

/**
 * express-openapi-validator as its README wires it, with the presence of credentials checked by
 * credentialPresence where the validator's own security step would run: after the operation is
 * matched, before its parameters are validated (a missing or empty token is `401`, not `400`).
 */
function validatorWithCredentialPresence(validateResponses: boolean): RequestHandler[] {
  const middlewares = OpenApiValidator.middleware({
    apiSpec: bundledSpecPath,
    // Every offending parameter, not the first: unknown query names are left to queryNames.ts,
    // since the validator throws at the first one and drops its other findings.
    validateRequests: { allowUnknownQueryParameters: true, allErrors: true },
    validateResponses,
    // Credentials are checked by credentialPresence (presence) and authenticate (validity): the
    // validator's step tries every scheme of an operation and builds an Error for each one a request
    // does not use.
    validateSecurity: false,
    fileUploader: false, // no operation takes multipart bodies: no multipart step on every request
  }) as RequestHandler[];
  // The validator names its steps (for stack traces); the operation is known once metadata has run.
  const matched = middlewares.findIndex((m) => m.name === 'metadataMiddleware');
  if (matched === -1) throw new Error('express-openapi-validator has no metadataMiddleware step: check its version');
  return [...middlewares.slice(0, matched + 1), credentialPresence, ...middlewares.slice(matched + 1)];
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.trustProxy);
  // No ETag: records change constantly and bots do not revalidate; hashing every body cost CPU.
  app.set('etag', false);
  const booleans = queryNamesOfType(bundledSpecPath, 'boolean');
  app.set('query parser', queryParser(booleans.everywhere));
  parseQueryOnce(app);
  const queryNames = queryNameCheck(bundledSpecPath);
  app.use(
    inOneLayer([
      requestLog(app, deps.logger, [requestMetrics(deps), deps.rateLimits.observe], deps.adminTokenHash),
      // A JSON API's headers, not a web page's (see JSON_API_HEADERS).
      securityHeaders(JSON_API_HEADERS.helmet, JSON_API_HEADERS.extra),
      ...(deps.corsOrigins.length > 0 ? [corsPolicy(deps)] : []), // nothing at all when CORS is off
      adminJsonBodies(),
      requestHygiene(queryNamesOfType(bundledSpecPath, 'integer'), booleans.onPaths, pathTemplatesOf(bundledSpecPath)),
      answerHeadAsGet,
      ...validatorWithCredentialPresence(deps.validateResponses),
      queryNames.middleware,
      credentialCheck(deps.bots), // a token and a bot key together: 400; bot keys brought up to date
      ...(deps.store.readsInTurn ? [] : [readAhead(deps.store)]), // overlaps the rate limit's round trip
      deps.rateLimits.middleware,
      dispatch(buildHandlers(deps), deps.adminTokenHash),
    ]),
  );
  // Whatever reached here matched no operation (e.g. an asterisk-form request target).
  app.use((_req, _res, next) => next(new HttpProblem(404, 'No operation is defined at this path.')));
  app.use(problemErrorHandler(deps.logger, queryNames.issuesOf));
  return app;
}
