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

/** [major, minor, patch] of `v24.1.0`, `24.1` or `24`; [] when it is no version. */
const parts = (version: string): number[] =>
  (/^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(version.trim()) ?? []).slice(1, 4).map((n) => Number(n ?? 0));

/**
 * Why Node `current` (as process.version writes it) cannot run chatbridge, as one line, or undefined
 * when it can. `range` is a lower bound, `>=X.Y.Z` (the only form engines.node takes here).
 */
export function nodeVersionProblem(current: string, range: string): string | undefined {
  const bound = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(range.trim());
  if (!bound) throw new Error(`engines.node must be ">=X.Y.Z", not ${JSON.stringify(range)}`);
  const [wantMajor = 0, wantMinor = 0, wantPatch = 0] = parts(bound[1]!);
  const have = parts(current);
  if (have.length === 3) {
    const [major = 0, minor = 0, patch = 0] = have;
    if ((major - wantMajor || minor - wantMinor || patch - wantPatch) >= 0) return undefined;
  }
  return (
    `chatbridge needs Node.js ${bound[1]} or later (engines: ${range}); this is Node.js ${current}. ` +
    `Install Node.js ${wantMajor} (https://nodejs.org/en/download, or: nvm install ${wantMajor}) and run it with that node; ` +
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
