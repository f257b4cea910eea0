// createApp builds the Express app and never listens. Order: request log and metrics, security
// headers, CORS, the body parser, request hygiene, then express-openapi-validator as its README wires
// it (security presence, parameters, responses) and the query names it leaves to us
// (http/request/queryNames.ts), the check of the credential's kind (a token or a bot key,
// http/auth/authenticate.ts), on PostgreSQL the read-ahead of getEndpoint's endpoint, rate limits,
// dispatch by operationId (admin operations check the admin token there), all of it behind one
// Express layer (http/pipeline.ts); then a problem+json 404 for anything unmatched, and one error
// handler for every error.
import express, { type Express } from 'express';
import { buildHandlers } from './handlers/index.ts';
import { credentialCheck } from './http/auth/authenticate.ts';
import type { AppDeps } from './http/deps.ts';
import { dispatch } from './http/dispatch.ts';
import { problemErrorHandler } from './http/errorHandler.ts';
import { requestLog } from './http/observe/requestLog.ts';
import { requestMetrics } from './http/observe/requestMetrics.ts';
import { inOneLayer } from './http/pipeline.ts';
import { HttpProblem } from './http/problem.ts';
import { adminJsonBodies } from './http/request/adminBodies.ts';
import { answerHeadAsGet } from './http/request/headAsGet.ts';
import { queryNamesOfType, requestHygiene } from './http/request/hygiene.ts';
import { queryNameCheck } from './http/request/queryNames.ts';
import { parseQueryOnce, queryParser } from './http/request/queryParser.ts';
import { readAhead } from './http/request/readAhead.ts';
import { validatorWithCredentialPresence } from './http/request/validator.ts';
import { corsPolicy } from './http/transport/cors.ts';
import { JSON_API_HEADERS, securityHeaders } from './http/transport/securityHeaders.ts';
import { loadSpecIndex } from './spec/specIndex.ts';

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.trustProxy);
  // No ETag: records change constantly and bots do not revalidate. Buys: no SHA-1 per response, ~2%
  // of a GET (BENCHMARKS.md, bdb3b62).
  app.set('etag', false);
  // The bundled spec, read once; the validator reads the same file itself.
  const spec = loadSpecIndex();
  app.set('query parser', queryParser(queryNamesOfType(spec, 'boolean').everywhere));
  parseQueryOnce(app);
  const queryNames = queryNameCheck(spec);
  app.use(
    inOneLayer([
      requestLog(app, deps.logger, [requestMetrics(deps.metrics), deps.rateLimits.observe], deps.adminTokenHash),
      // A JSON API's headers, not a web page's (see JSON_API_HEADERS).
      securityHeaders(JSON_API_HEADERS.helmet, JSON_API_HEADERS.extra),
      ...(deps.corsOrigins.length > 0 ? [corsPolicy(deps.corsOrigins)] : []), // nothing at all when CORS is off
      adminJsonBodies(),
      requestHygiene(spec),
      answerHeadAsGet,
      ...validatorWithCredentialPresence(spec.file, deps.validateResponses),
      queryNames.middleware,
      credentialCheck(deps.bots), // a token and a bot key together: 400; bot keys brought up to date
      ...(deps.store.inProcess ? [] : [readAhead(deps.store)]), // overlaps the rate limit's round trip
      deps.rateLimits.middleware,
      dispatch(buildHandlers(deps), deps.adminTokenHash),
    ]),
  );
  // Whatever reached here matched no operation (e.g. an asterisk-form request target).
  app.use((_req, _res, next) => next(new HttpProblem(404, 'No operation is defined at this path.')));
  app.use(problemErrorHandler(deps.logger, queryNames.issuesOf));
  return app;
}
