// Who acts on a record operation: the holder of the endpoint's token (the `token` query parameter),
// the operator (the admin token in `Authorization: Bearer`), or a bot of one platform (a bot key in
// `Authorization: Bearer`, valid only on endpoints where its platform takes part). Every
// record operation authenticates through `authenticate`. The credential is hashed once per request:
// the per-endpoint rate limit keys its bucket by the same digest (bought, with the query parsed once:
// update 325-386 → 171-197 µs CPU, BENCHMARKS.md, de44978). Only digests are kept, never the token or key.
import type { Request, RequestHandler } from 'express';
import type { BotKeyCache } from '../../bots/keyCache.ts';
import { takesPart } from '../../domain/botRights.ts';
import type { EndpointRecord, Platform } from '../../domain/record.ts';
import { digestsMatch, hashToken, tokenMatchesDigest } from '../../tokens.ts';
import { openapiOf } from '../operations.ts';
import { unauthorizedDetail } from '../errorHandler.ts';
import { HttpProblem, invalid } from '../problem.ts';

export type Actor = { kind: 'token' } | { kind: 'admin' } | { kind: 'bot'; bot: string; platform: Platform };

/** A store decision's answer when the request's credential does not open the endpoint (401). */
export type Unauthenticated = { kind: 'unauthorized' };

/** What authenticating a bearer credential needs: the bot keys, and the admin token's digest (undefined: no admin API). */
export interface Credentials {
  bots: BotKeyCache;
  adminTokenHash: Uint8Array | undefined;
}

/** The platform a request acts for: a bot key's; none for a token or the admin token (they name one). */
export const actingPlatform = (actor: Actor): Platform | undefined => (actor.kind === 'bot' ? actor.platform : undefined);

type Credential = { kind: 'token' | 'botKey'; digest: Buffer };

const credentials = new WeakMap<Request, Credential | null>();

/** The bearer credential of the Authorization header, if it has one (the scheme's name in any case, RFC 9110 §11.1). */
const bearerOf = (req: Request): string | undefined => /^bearer +(.*)$/is.exec(req.headers.authorization ?? '')?.[1];

/** Whether the matched operation may be authenticated with a bot key (its spec security names `botKey`). */
export const acceptsBotKey = (req: Request): boolean => (openapiOf(req).schema?.security ?? []).some((s) => 'botKey' in s);

/**
 * The credential a record operation's request presents: a bot key when it has a bearer header (and
 * the operation accepts bot keys), else its `token`. Computed once per request.
 */
function credentialOf(req: Request): Credential | undefined {
  let found = credentials.get(req);
  if (found === undefined) {
    const key = acceptsBotKey(req) ? bearerOf(req) : undefined;
    const token = req.query.token;
    found =
      key !== undefined
        ? { kind: 'botKey', digest: hashToken(key) }
        : typeof token === 'string'
          ? { kind: 'token', digest: hashToken(token) }
          : null;
    credentials.set(req, found);
  }
  return found ?? undefined;
}

/** Whether the request authenticates with a bot key (rather than a token, or nothing). */
export const presentsBotKey = (req: Request): boolean => credentialOf(req)?.kind === 'botKey';

/** SHA-256 of the presented token or bot key; undefined when the request presents neither. */
export function presentedCredentialDigest(req: Request): Buffer | undefined {
  return credentialOf(req)?.digest;
}

/**
 * Before rate limits and handlers, on operations that accept bot keys: a request with both a token
 * and a bot key is refused (which one counts would be a guess), and the in-memory bot keys are
 * brought up to date when a bot key is presented, so that `authenticate` can answer synchronously
 * (inside a store transaction's decision).
 */
export function credentialCheck(bots: BotKeyCache): RequestHandler {
  return (req, _res, next) => {
    if (!acceptsBotKey(req) || bearerOf(req) === undefined) return next();
    if (req.query.token !== undefined) {
      return next(
        invalid([{ parameter: 'token', in: 'query', message: 'give either the token or a bot key (Authorization: Bearer), not both' }]),
      );
    }
    const reload = bots.fresh();
    if (!reload) return next();
    return reload.then(() => next(), next);
  };
}

/**
 * Who the request acts as on `found`, or undefined. Every case makes the same constant-time digest
 * comparisons: a missing endpoint and an unknown bot key are compared against a fixed digest, so the
 * answer's timing tells neither whether an endpoint exists nor whether a key is close to one. A bot
 * key on an endpoint where its platform takes no part is undefined too: the same answer as a wrong
 * token, so a key cannot tell which endpoints exist.
 */
export function authenticate(
  req: Request,
  found: { tokenHash: Uint8Array; record: EndpointRecord } | undefined,
  { bots, adminTokenHash }: Credentials,
): Actor | undefined {
  const credential = credentialOf(req);
  if (credential?.kind === 'botKey') {
    // The key is compared whether or not the endpoint exists, so timing does not tell which.
    const bot = botOf(credential.digest, bots);
    const admin = digestsMatch(adminTokenHash, credential.digest);
    if (found === undefined) return undefined;
    if (bot) return takesPart(found.record, bot.platform) ? bot : undefined;
    return admin ? { kind: 'admin' } : undefined;
  }
  return digestsMatch(found?.tokenHash, credential?.digest) ? { kind: 'token' } : undefined;
}

/**
 * The bot a request's key belongs to, for operations that address no one endpoint (every endpoint
 * of the service is open to a bot key); undefined without a valid key. Same comparison as authenticate.
 */
export function authenticateBot(req: Request, bots: BotKeyCache): Extract<Actor, { kind: 'bot' }> | undefined {
  const credential = credentialOf(req);
  return credential?.kind === 'botKey' ? botOf(credential.digest, bots) : undefined;
}

/** One constant-time comparison, against a fixed digest when no bot has this key's digest. */
function botOf(digest: Buffer, bots: BotKeyCache): Extract<Actor, { kind: 'bot' }> | undefined {
  const bot = bots.find(digest);
  return digestsMatch(bot?.keyHash, digest) && bot ? { kind: 'bot', bot: bot.id, platform: bot.platform } : undefined;
}

/** Whether the request presents the operator's admin token (never, when the admin API is off). */
export function presentsAdminToken(req: Request, adminTokenHash: Uint8Array | undefined): boolean {
  return tokenMatchesDigest(adminTokenHash, bearerOf(req));
}

/**
 * A request to an operation that takes credentials presents one of them: the `token` query parameter
 * (`endpointToken`) or an `Authorization: Bearer` header (`botKey`, `adminBearer`); else `401` before
 * anything else is looked at. Only presence: whether it is right is `authenticate`'s (or the admin
 * check's) to say. Done here rather than by the validator, which tries every scheme of an operation
 * and builds an Error for each one a request does not use.
 */
export const credentialPresence: RequestHandler = (req, _res, next) => {
  const security = openapiOf(req).schema?.security;
  if (!security?.length) return next();
  const bearer = bearerOf(req) !== undefined;
  // An empty token counts as none, as with the validator's apiKey check.
  const token = req.query.token;
  const presents = security.some((alternative) =>
    Object.keys(alternative).every((scheme) => (scheme === 'endpointToken' ? !!token : bearer)),
  );
  return presents ? next() : next(new HttpProblem(401, unauthorizedDetail(req)));
};
