// How the benchmarks start chatbridge's server: as `pnpm start` starts it, with production settings.
// Shared by `pnpm bench` (run.ts) and `pnpm bench:ab` (ab.ts), so both measure the same process.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Production settings; request validation against the spec stays on. */
export const PRODUCTION_SERVER_ENV = { NODE_ENV: 'production', CHATBRIDGE_VALIDATE_RESPONSES: 'false', LOG_LEVEL: 'warn', HOST: '127.0.0.1' };

/** A checkout's root package.json scripts. */
export function scriptsOf(checkout: string): Record<string, string> {
  return (JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
}

/** How a checkout's `pnpm start` runs the server: its node flags and the script (relative to the checkout). */
export interface ServerCommand {
  flags: string[];
  main: string;
}

/**
 * A checkout's server command, read from its root package.json: the last command of its start
 * script (`pnpm start` builds first, then runs `node <flags> <main>`). Older checkouts ran the
 * TypeScript sources with no build step; this reads either.
 */
export function serverCommandOf(checkout: string): ServerCommand {
  const start = scriptsOf(checkout).start ?? '';
  const words = start.split('&&').pop()!.trim().split(/\s+/);
  const at = words.findIndex((w) => /main\.[jt]s$/.test(w));
  if (words[0] !== 'node' || at === -1) throw new Error(`${checkout}: cannot read the server command from its start script: ${start}`);
  return { flags: words.slice(1, at), main: words[at]! };
}

/** Runs a checkout's `pnpm build` (the compiled server `pnpm start` runs), if it has one. */
export function buildServer(checkout: string): void {
  if (scriptsOf(checkout).build) execFileSync('pnpm', ['-s', 'build'], { cwd: checkout, stdio: 'inherit' });
}

/** The median; the mean of the middle two for an even count. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
