// The environment the server and the CLI both read their configuration from: the process's own, over
// an optional file of `NAME=value` lines. The file is `chatbridge.env` in the working folder when it
// exists (`pnpm start` and `pnpm chatbridge` both run at the checkout's root, so they share it), or the
// file CHATBRIDGE_ENV_FILE names. The process's variables win, so a one-off `PORT=9000 pnpm start`
// still overrides it. The format is the one systemd's EnvironmentFile= and Node's --env-file read.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError } from './config.ts';

export const DEFAULT_ENV_FILE = 'chatbridge.env';

export interface Environment {
  env: NodeJS.ProcessEnv;
  /** The file read, if any (absolute). */
  file: string | undefined;
}

export function readEnvironment(env: NodeJS.ProcessEnv, cwd: string): Environment {
  const named = env.CHATBRIDGE_ENV_FILE?.trim();
  const file = resolve(cwd, named || DEFAULT_ENV_FILE);
  if (!existsSync(file)) {
    if (named) throw new ConfigError(`Invalid configuration:\n  CHATBRIDGE_ENV_FILE: no file at ${file}`);
    return { env, file: undefined };
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`Invalid configuration:\n  ${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return { env: { ...parseEnv(text), ...env }, file };
}
