// How the bench starts chatbridge's server: as `pnpm start` starts it, with production settings.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Production settings; request validation against the spec stays on. */
export const PRODUCTION_SERVER_ENV = {
  NODE_ENV: 'production',
  CHATBRIDGE_VALIDATE_RESPONSES: 'false',
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
};

const scriptsOf = (root: string) =>
  (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/**
 * V8 settings for the measured server, and only for it: a small young generation and no
 * pretenuring suit a process that answers many small requests, and keep figures comparable between
 * runs. Production runs without them (`pnpm start`), its heap sized by the operator.
 */
export const BENCH_NODE_FLAGS = [
  '--max-semi-space-size=8',
  '--max-old-space-size=160',
  '--no-allocation-site-pretenuring',
  '--initial-old-space-size=64',
];

/** The server's entry point, as the root package.json's start script (its last `&&` part) names it. */
export function serverCommandOf(root: string): { flags: string[]; main: string } {
  const start = scriptsOf(root).start ?? '';
  const words = start.split('&&').pop()!.trim().split(/\s+/);
  const main = words.find((w) => /main\.[jt]s$/.test(w));
  if (words[0] !== 'node' || main === undefined) throw new Error(`cannot read the server command from the start script: ${start}`);
  return { flags: BENCH_NODE_FLAGS, main };
}

/** `pnpm build`: the compiled server that `pnpm start` runs. */
export function buildServer(root: string): void {
  if (scriptsOf(root).build) execFileSync('pnpm', ['-s', 'build'], { cwd: root, stdio: 'inherit' });
}
