// The digest of the endpoint token a request presents (its `token` query parameter), computed once
// per request: the per-endpoint rate limit keys its bucket by it and the handler authenticates with
// it, so the token is hashed once instead of twice. Only the digest is kept, never the token.
import type { Request } from 'express';
import { digestsMatch, hashToken } from '../tokens.ts';

const digests = new WeakMap<Request, Buffer>();

/** SHA-256 of `req.query.token`; undefined when the request has no single token parameter. */
export function presentedTokenDigest(req: Request): Buffer | undefined {
  const token = req.query.token;
  if (typeof token !== 'string') return undefined;
  let digest = digests.get(req);
  if (!digest) digests.set(req, (digest = hashToken(token)));
  return digest;
}

/**
 * Whether the request presents the token of `found`. A missing endpoint goes through the same digest
 * comparison (against a fixed digest) as a wrong token on an existing one, so the answer's timing does
 * not tell whether an endpoint exists.
 */
export function presentsTokenOf<T extends { tokenHash: Uint8Array }>(req: Request, found: T | undefined): found is T {
  return digestsMatch(found?.tokenHash, presentedTokenDigest(req));
}
