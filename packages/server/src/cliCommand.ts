// How an operator runs the CLI where this server runs, for the hints the server prints: in a checkout
// (the sources beside the build) through pnpm, in the deployable folder (no pnpm, no sources) with the
// node running the server and the cli.js beside its main.js.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function cliCommand(): string {
  if (existsSync(new URL('../src/cli.ts', import.meta.url))) return 'pnpm chatbridge';
  return `${process.execPath} ${fileURLToPath(new URL('./cli.js', import.meta.url))}`;
}
