// How the benchmarks start chatbridge's server: as `pnpm start` starts it, with production settings.
// Shared by `pnpm bench` (run.ts) and `pnpm bench:ab` (ab.ts), so both measure the same process.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const SERVER_MAIN = 'packages/server/src/main.ts';

/** Production settings; request validation against the spec stays on. */
export const PRODUCTION_SERVER_ENV = { NODE_ENV: 'production', CHATBRIDGE_VALIDATE_RESPONSES: 'false', LOG_LEVEL: 'warn', HOST: '127.0.0.1' };

/** The node flags of a checkout's `pnpm start` (its root package.json), without the script path. */
export function startFlagsOf(checkout: string): string[] {
  const start = (JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
  return start.slice(1, start.indexOf(SERVER_MAIN));
}

/** The median; the mean of the middle two for an even count. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
