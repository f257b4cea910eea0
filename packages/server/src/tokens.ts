// Endpoint and admin tokens: issued from a CSPRNG, stored and compared only as SHA-256 digests.
// The tokens carry 432 random bits, so a fast hash is enough: nothing can be guessed from a digest.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const TOKEN_PREFIX = 'cbt_';
const TOKEN_RANDOM_BYTES = 54; // 432 bits -> 72 base64url characters; 76 with the prefix.

export function issueToken(): string {
  return TOKEN_PREFIX + randomBytes(TOKEN_RANDOM_BYTES).toString('base64url');
}

export function hashToken(token: string): Buffer {
  // One-shot hash: no Hash object per call (it runs on every authenticated request).
  return hash('sha256', token, 'buffer');
}

// Compared against when the endpoint does not exist, so that case costs the same as a wrong token.
const NO_DIGEST = hashToken('no endpoint');

/** Constant-time check of a presented token against a stored digest (absent: never matches). */
export function tokenMatchesDigest(stored: Uint8Array | undefined, presented: string | undefined): boolean {
  return digestsMatch(stored, presented === undefined ? undefined : hashToken(presented));
}

/** The same check when the presented token's digest is already known (hashed once per request: http/auth/authenticate.ts). */
export function digestsMatch(stored: Uint8Array | undefined, presented: Uint8Array | undefined): boolean {
  const digest = presented ?? NO_DIGEST;
  const equal = timingSafeEqual(digest, stored?.length === digest.length ? stored : NO_DIGEST);
  return equal && stored !== undefined && presented !== undefined;
}

/** Bot keys: as strong as endpoint tokens, with their own prefix so a log reader or a human tells them apart. */
export const BOT_KEY_PREFIX = 'cbk_';

export function issueBotKey(): string {
  return BOT_KEY_PREFIX + randomBytes(TOKEN_RANDOM_BYTES).toString('base64url');
}
