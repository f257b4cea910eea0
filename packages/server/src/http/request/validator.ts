// express-openapi-validator as its README wires it, with the presence of credentials checked by
// credentialPresence where the validator's own security step would run: after the operation is
// matched, before its parameters are validated (a missing or empty token is `401`, not `400`).
import type { RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { credentialPresence } from '../auth/authenticate.ts';

export function validatorWithCredentialPresence(apiSpec: string, validateResponses: boolean): RequestHandler[] {
  const middlewares = OpenApiValidator.middleware({
    apiSpec,
    // Every offending parameter, not the first: unknown query names are left to queryNames.ts,
    // since the validator throws at the first one and drops its other findings.
    validateRequests: { allowUnknownQueryParameters: true, allErrors: true },
    validateResponses,
    // Credentials are checked by credentialPresence (presence) and authenticate (validity): the
    // validator's step tries every scheme of an operation and builds an Error for each one a request
    // does not use. Buys: GET 63 → 53 µs CPU (BENCHMARKS.md, c656aac).
    validateSecurity: false,
    // No operation takes multipart bodies: no multipart step on every request (measured with the
    // one-layer pipeline, 8aeba2b).
    fileUploader: false,
  }) as RequestHandler[];
  // The validator names its steps (for stack traces); the operation is known once metadata has run.
  const matched = middlewares.findIndex((m) => m.name === 'metadataMiddleware');
  if (matched === -1) throw new Error('express-openapi-validator has no metadataMiddleware step: check its version');
  return [...middlewares.slice(0, matched + 1), credentialPresence, ...middlewares.slice(matched + 1)];
}
