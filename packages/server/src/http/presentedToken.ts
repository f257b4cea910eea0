// The digest of the endpoint token a request presents (its `token` query parameter), computed once
// per request: the per-endpoint rate limit keys its bucket by it and the handler authenticates with
// it, so the token is hashed once instead of twice. Only the digest is kept, never the token.
import type { Request } from 'express';
import { hashToken } from '../tokens.ts';

const digests = new WeakMap<Request, Buffer>();

/** SHA-256 of `req.query.token`; undefined when the request has no single token parameter. */
export function presentedTokenDigest(req: Request): Buffer | undefined {
  const token = req.query.token;
  if (typeof token !== 'string') return undefined;
  let digest = digests.get(req);
  if (!digest) digests.set(req, (digest = hashToken(token)));
  return digest;
}
