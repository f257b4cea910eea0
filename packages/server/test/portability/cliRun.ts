// Runs `chatbridge` (src/cli.ts) as the operator does, on the store an environment names.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const CLI = join(import.meta.dirname, '..', '..', 'src', 'cli.ts');
const run = promisify(execFile);

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `store`: CHATBRIDGE_SQLITE_PATH of a SQLite file, or a postgres:// URL. */
export async function chatbridge(store: string, ...args: string[]): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent' };
  delete env.DATABASE_URL;
  delete env.CHATBRIDGE_STORE;
  if (store.startsWith('postgres')) Object.assign(env, { CHATBRIDGE_STORE: 'postgres', DATABASE_URL: store });
  else env.CHATBRIDGE_SQLITE_PATH = store;
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}
