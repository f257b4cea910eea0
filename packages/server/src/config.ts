// The server's configuration, parsed from the environment once at start. Invalid settings stop the
// process with a message naming them; nothing else reads process.env.
import { z } from 'zod';
import { hashToken } from './tokens.ts';

const bool = z
  .enum(['true', 'false', '1', '0'])
  .transform((v) => v === 'true' || v === '1');

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NODE_ENV: z.string().optional(),
  CHATBRIDGE_ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  CHATBRIDGE_STORE: z.enum(['sqlite']).default('sqlite'),
  CHATBRIDGE_SQLITE_PATH: z.string().min(1).default('./data/chatbridge.sqlite'),
  CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE: bool.default(false),
  CHATBRIDGE_VALIDATE_RESPONSES: bool.optional(),
});

export interface AppConfig {
  port: number;
  host: string;
  logLevel: string;
  /** SHA-256 of the admin token; undefined disables the admin API (every request 401). */
  adminTokenHash: Buffer | undefined;
  store: { kind: 'sqlite'; sqlitePath: string };
  /** Development only: admit plain http webhook URLs (and, for delivery, private addresses). */
  allowPrivateWebhooks: boolean;
  /** Check every response against the spec; on unless NODE_ENV=production. */
  validateResponses: boolean;
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv): AppConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    adminTokenHash: e.CHATBRIDGE_ADMIN_TOKEN === undefined ? undefined : hashToken(e.CHATBRIDGE_ADMIN_TOKEN),
    store: { kind: e.CHATBRIDGE_STORE, sqlitePath: e.CHATBRIDGE_SQLITE_PATH },
    allowPrivateWebhooks: e.CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE,
    validateResponses: e.CHATBRIDGE_VALIDATE_RESPONSES ?? e.NODE_ENV !== 'production',
  };
}
