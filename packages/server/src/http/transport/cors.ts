// CORS is off unless the operator lists origins: bots call from servers, and a browser page holding
// an endpoint token is the exception. The admin API never answers cross-origin requests.
import cors from 'cors';
import type { RequestHandler } from 'express';
import { isAdminPath } from '../problem.ts';

/** A page may read the headers the contract gives meaning to, not only the CORS-safelisted ones. */
const EXPOSED_HEADERS = [
  'Chatbridge-Message-Number',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'X-Request-Id',
  'WWW-Authenticate',
];

export function corsPolicy(origins: string[]): RequestHandler {
  const allow = cors({ origin: origins, methods: ['GET', 'POST'], maxAge: 600, exposedHeaders: EXPOSED_HEADERS });
  return (req, res, next) => (isAdminPath(req.path) ? next() : allow(req, res, next));
}
