// The server's configuration, parsed from the environment once at start. Invalid settings stop the
// process with a message naming them; no other code of ours reads process.env (the PostgreSQL driver
// reads its own PG* variables).
import proxyaddr from 'proxy-addr';
import { z } from 'zod';
import { hashToken } from './tokens.ts';

/** The SQLite file when CHATBRIDGE_SQLITE_PATH is unset; its folder is the one the store creates itself. */
export const DEFAULT_SQLITE_PATH = './data/chatbridge.sqlite';

/** true/false in any letter case (as the HTTP booleans), or 1/0. */
const bool = z
  .string()
  .toLowerCase()
  .pipe(z.enum(['true', 'false', '1', '0']))
  .transform((v) => v === 'true' || v === '1');

/**
 * One entry of Express's `trust proxy` list: a name proxy-addr knows, or an address with an optional
 * prefix length or netmask. Judged by proxy-addr itself (the library Express hands the list to), so a
 * typo stops start-up naming the variable instead of failing inside Express with a stack trace.
 */
export function isTrustedProxyEntry(entry: string): boolean {
  try {
    proxyaddr.compile(entry);
    return true;
  } catch {
    return false;
  }
}

/**
 * An empty (or blank) value counts as not set, so the default applies: `PORT=` would otherwise
 * coerce to 0 (a random port), and an empty rate limit to 0 (the limit switched off), which a
 * deployment template passing an unset variable through would do without a word.
 */
const unsetIfEmpty = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

/** Every variable the configuration reads, and how (tests/docs/drift.test.ts holds the README's table to it). */
export const EnvSchema = z.object({
  PORT: z.preprocess(unsetIfEmpty, z.coerce.number().int().min(0).max(65535).default(8080)),
  HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NODE_ENV: z.string().optional(),
  CHATBRIDGE_ADMIN_TOKEN: z
    .string()
    .refine((v) => v.trim().length >= 16, 'must be at least 16 characters, not counting blanks')
    .refine((v) => v === v.trim(), 'must not begin or end with blanks (they cannot be sent in a bearer token)')
    .refine(
      (v) => /^[\x20-\x7e]*$/.test(v),
      'must be printable ASCII (HTTP clients cannot send other characters in a header as the server reads them)',
    )
    .optional(),
  // Unset: postgres when DATABASE_URL is set (see storeKindOf), else sqlite.
  CHATBRIDGE_STORE: z.preprocess(unsetIfEmpty, z.enum(['sqlite', 'postgres']).optional()),
  CHATBRIDGE_SQLITE_PATH: z.string().min(1).default(DEFAULT_SQLITE_PATH),
  // Checked in loadConfig, and only for the postgres store: other tools may set it for their own use.
  DATABASE_URL: z.string().optional(),
  CHATBRIDGE_PG_POOL_SIZE: z.preprocess(unsetIfEmpty, z.coerce.number().int().min(1).max(1000).default(10)),
  CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE: bool.default(false),
  CHATBRIDGE_VALIDATE_RESPONSES: bool.optional(),
  CHATBRIDGE_MESSAGE_TTL_SECONDS: z.preprocess(unsetIfEmpty, z.coerce.number().positive().max(86_400).default(600)),
  CHATBRIDGE_DRAIN_SECONDS: z.preprocess(unsetIfEmpty, z.coerce.number().min(0).max(300).default(0)),
  CHATBRIDGE_AUTH_FAILURES_PER_MINUTE: z.preprocess(unsetIfEmpty, z.coerce.number().int().min(0).max(100_000).default(10)),
  CHATBRIDGE_AUTH_FAILURES_PER_ADDRESS_PER_MINUTE: z.preprocess(unsetIfEmpty, z.coerce.number().int().min(0).max(1_000_000).default(3_000)),
  CHATBRIDGE_RATE_LIMIT_PER_ENDPOINT: z.preprocess(unsetIfEmpty, z.coerce.number().int().min(0).max(1_000_000).default(50)),
  CHATBRIDGE_MAX_CONNECTIONS: z.preprocess(unsetIfEmpty, z.coerce.number().int().min(0).max(1_000_000).default(10_000)),
  CHATBRIDGE_MAX_CONNECTIONS_PER_ADDRESS: z.preprocess(unsetIfEmpty, z.coerce.number().int().min(0).max(1_000_000).default(1_000)),
  CHATBRIDGE_MANAGEMENT_PORT: z.preprocess(unsetIfEmpty, z.coerce.number().int().min(0).max(65535).optional()),
  CHATBRIDGE_TRUST_PROXY: z
    .string()
    .default('false')
    .refine(
      (v) => ['true', 'false'].includes(v) || /^\d+$/.test(v) || v.split(',').every((entry) => isTrustedProxyEntry(entry.trim())),
      'must be true, false, a number of hops, or comma-separated addresses, CIDR ranges or loopback/linklocal/uniquelocal',
    )
    .transform((v): boolean | number | string => (v === 'true' ? true : v === 'false' ? false : /^\d+$/.test(v) ? Number(v) : v)),
  CHATBRIDGE_PUBLIC_URL: z.preprocess(
    unsetIfEmpty,
    z
      .string()
      .regex(/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/, 'must be an http(s) URL without query or fragment, like https://bridge.example.com')
      .transform((v) => v.replace(/\/+$/, ''))
      .optional(),
  ),
  CHATBRIDGE_CORS_ORIGINS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    )
    .refine((list) => list.every((o) => /^https?:\/\/[^/\s]+$/.test(o)), 'must be comma-separated origins like https://app.example.com'),
});

export interface AppConfig {
  port: number;
  host: string;
  /** The address clients reach the server at (behind a proxy, a host name), for the URLs shown to operators. */
  publicUrl: string | undefined;
  logLevel: string;
  /** SHA-256 of the admin token; undefined disables the admin API (every request 401). */
  adminTokenHash: Buffer | undefined;
  store: StoreConfig;
  /** Development only: admit plain http webhook URLs and deliveries to private/loopback addresses. */
  allowPrivateWebhooks: boolean;
  /** Check every response against the spec; on unless NODE_ENV=production. */
  validateResponses: boolean;
  /** A pending message not read by every platform within this time is dropped. */
  messageTtlMs: number;
  /** After SIGTERM, how long the server keeps serving with /-/ready at 503 before it stops listening. */
  drainMs: number;
  /** Browser origins allowed to call the record operations; empty: no CORS. */
  corsOrigins: string[];
  rateLimits: { authFailuresPerMinute: number; authFailuresPerAddressPerMinute: number; perEndpointPerSecond: number };
  /** Express `trust proxy` (false, true, a hop count, or addresses). */
  trustProxy: boolean | number | string;
  /** Open connections allowed, in all and per client address (0: no limit). */
  connections: { max: number; perAddress: number };
  /** A second listener, on HOST, that serves only the health probes and metrics; undefined: none. */
  managementPort: number | undefined;
}

export type StoreConfig = { kind: 'sqlite'; sqlitePath: string } | { kind: 'postgres'; databaseUrl: string; poolSize: number };

export class ConfigError extends Error {}

/**
 * The store the environment selects: CHATBRIDGE_STORE when set; otherwise PostgreSQL when DATABASE_URL
 * is set (an operator who gives a database means to use it, not to run on a local file beside it).
 */
export function storeKindOf(env: NodeJS.ProcessEnv): 'sqlite' | 'postgres' | undefined {
  const named = env.CHATBRIDGE_STORE?.trim();
  if (named) return named === 'sqlite' || named === 'postgres' ? named : undefined;
  return env.DATABASE_URL?.trim() ? 'postgres' : 'sqlite';
}

export function loadConfig(env: NodeJS.ProcessEnv): AppConfig {
  const parsed = EnvSchema.safeParse(env);
  const lines = parsed.success ? [] : parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
  if (storeKindOf(env) === 'postgres') {
    // The value itself is never echoed: it normally carries a password.
    if (!env.DATABASE_URL) {
      lines.push('  DATABASE_URL: required when CHATBRIDGE_STORE=postgres (postgres://user:password@host:5432/database)');
    } else if (!/^postgres(ql)?:\/\/\S+$/.test(env.DATABASE_URL) || !URL.canParse(env.DATABASE_URL)) {
      const why = env.CHATBRIDGE_STORE
        ? ''
        : '; with CHATBRIDGE_STORE unset, DATABASE_URL selects PostgreSQL (set CHATBRIDGE_STORE=sqlite for the embedded store)';
      lines.push(`  DATABASE_URL: must be a postgres:// or postgresql:// URL (check the host and the port)${why}`);
    }
  }
  if (!parsed.success || lines.length > 0) throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    publicUrl: e.CHATBRIDGE_PUBLIC_URL,
    logLevel: e.LOG_LEVEL,
    adminTokenHash: e.CHATBRIDGE_ADMIN_TOKEN === undefined ? undefined : hashToken(e.CHATBRIDGE_ADMIN_TOKEN),
    store:
      storeKindOf(env) === 'postgres'
        ? { kind: 'postgres', databaseUrl: e.DATABASE_URL!, poolSize: e.CHATBRIDGE_PG_POOL_SIZE }
        : { kind: 'sqlite', sqlitePath: e.CHATBRIDGE_SQLITE_PATH },
    allowPrivateWebhooks: e.CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE,
    validateResponses: e.CHATBRIDGE_VALIDATE_RESPONSES ?? e.NODE_ENV !== 'production',
    // Whole milliseconds: the stores keep instants as integers (2.0005 s would be 2000.4999... ms).
    messageTtlMs: Math.max(1, Math.round(e.CHATBRIDGE_MESSAGE_TTL_SECONDS * 1000)),
    drainMs: e.CHATBRIDGE_DRAIN_SECONDS * 1000,
    corsOrigins: e.CHATBRIDGE_CORS_ORIGINS,
    rateLimits: {
      authFailuresPerMinute: e.CHATBRIDGE_AUTH_FAILURES_PER_MINUTE,
      authFailuresPerAddressPerMinute: e.CHATBRIDGE_AUTH_FAILURES_PER_ADDRESS_PER_MINUTE,
      perEndpointPerSecond: e.CHATBRIDGE_RATE_LIMIT_PER_ENDPOINT,
    },
    trustProxy: e.CHATBRIDGE_TRUST_PROXY,
    connections: { max: e.CHATBRIDGE_MAX_CONNECTIONS, perAddress: e.CHATBRIDGE_MAX_CONNECTIONS_PER_ADDRESS },
    managementPort: e.CHATBRIDGE_MANAGEMENT_PORT,
  };
}
