// How the bench starts chatbridge's server: as `pnpm start` starts it, with production settings.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Production settings; request validation against the spec stays on. */
export const PRODUCTION_SERVER_ENV = { NODE_ENV: 'production', CHATBRIDGE_VALIDATE_RESPONSES: 'false', LOG_LEVEL: 'warn', HOST: '127.0.0.1' };

const scriptsOf = (root: string) => (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/**
 * The server command of the root package.json's start script (its last `&&` part, `node <flags>
 * <main.js>`): the heap flags are part of what is measured.
 */
export function serverCommandOf(root: string): { flags: string[]; main: string } {
  const start = scriptsOf(root).start ?? '';
  const words = start.split('&&').pop()!.trim().split(/\s+/);
  const at = words.findIndex((w) => /main\.[jt]s$/.test(w));
  if (words[0] !== 'node' || at === -1) throw new Error(`cannot read the server command from the start script: ${start}`);
  return { flags: words.slice(1, at), main: words[at]! };
}

/** `pnpm build`: the compiled server that `pnpm start` runs. */
export function buildServer(root: string): void {
  if (scriptsOf(root).build) execFileSync('pnpm', ['-s', 'build'], { cwd: root, stdio: 'inherit' });
}

/** The median; the mean of the middle two for an even count. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
