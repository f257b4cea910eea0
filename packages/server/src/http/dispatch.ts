// Runs the operation the validator matched. Operations whose only security is `adminBearer` need the
// operator's admin token first: checked here, not in a layer of its own that every request crosses.
// An operation that also takes a bot key (lookupEndpoints) checks either in its handler.
import type { RequestHandler } from 'express';
import { presentsAdminToken } from './auth/authenticate.ts';
import { type Handlers, type OperationId, openapiOf } from './operations.ts';
import { ADMIN_UNAUTHORIZED_DETAIL, HttpProblem } from './problem.ts';

export function dispatch(handlers: Handlers, adminTokenHash: Uint8Array | undefined): RequestHandler {
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
