// The first thing every entry point runs (the server's main.js, the CLI's cli.js): is this Node
// recent enough? Kept tiny and free of imports beyond node:fs, and loaded before any other module of
// the server, so that an older Node answers with one line naming the version needed and how to get it
// instead of a stack trace about a module it lacks (node:sqlite) or syntax it cannot read. The version
// needed is the server package's `engines.node`, so what pnpm checks and what this checks agree.
import { readFileSync } from 'node:fs';

/** `engines.node` of the server's package.json (one folder above src/ and dist/ alike). */
export function requiredNodeRange(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines?: { node?: string } };
  const range = pkg.engines?.node;
  if (range === undefined) throw new Error('the server package.json has no engines.node');
  return range;
}

const parts = (version: string) =>
  (/^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(version.trim()) ?? []).slice(1, 4).map((n) => Number(n ?? 0)) as number[];

/**
 * Why Node `current` (as process.version writes it) cannot run chatbridge, as one line, or undefined
 * when it can. `range` is a lower bound, `>=X.Y.Z` (the only form engines.node takes here).
 */
export function nodeVersionProblem(current: string, range: string): string | undefined {
  const bound = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(range.trim());
  if (!bound) throw new Error(`engines.node must be ">=X.Y.Z", not ${JSON.stringify(range)}`);
  const want = parts(bound[1]!);
  const have = parts(current);
  if (have.length === 3) {
    for (let i = 0; i < 3; i++) {
      if (have[i]! > want[i]!) return undefined;
      if (have[i]! < want[i]!) break;
      if (i === 2) return undefined;
    }
  }
  const major = want[0]!;
  return (
    `chatbridge needs Node.js ${bound[1]} or later (engines: ${range}); this is Node.js ${current}. ` +
    `Install Node.js ${major} (https://nodejs.org/en/download, or: nvm install ${major}) and run it with that node; ` +
    'in a checkout, pnpm start and pnpm chatbridge use the Node.js the project pins.'
  );
}

/** Exits with status 1 and one line on standard error when this Node is too old. */
export function requireSupportedNode(): void {
  const problem = nodeVersionProblem(process.version, requiredNodeRange());
  if (problem === undefined) return;
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
