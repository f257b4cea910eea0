// Prose that restates the code is held to it: the scripts table of docs/development.md to the root
// package.json (and its `pnpm test` row to what scripts/test-all.ts runs), and the README's
// configuration table to the variables config.ts reads and the defaults it applies.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EnvSchema, loadConfig } from '../../packages/server/src/config.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The rows of the first table under the heading `## <heading>` of a Markdown file, each cell trimmed. */
function tableUnder(markdown: string, heading: string): string[][] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith(`${heading}\n`));
  if (section === undefined) throw new Error(`no section "## ${heading}"`);
  return section
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .slice(2) // the header and the delimiter row
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
}

/** The text of each `code span` of a cell. */
const codeSpans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

describe('docs/development.md, the scripts table', () => {
  const scripts = Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
  const rows = tableUnder(read('docs/development.md'), 'Scripts');
  /** `pnpm deploy:bundle [folder]` names the script deploy:bundle. */
  const scriptOf = (cell: string) => /^`pnpm ([^\s`]+)/.exec(cell)?.[1];

  it('when a root package.json script is added or removed, then the table has a row for each, and for nothing else', () => {
    const documented = rows.map(([cell]) => scriptOf(cell!));
    expect({
      undocumented: scripts.filter((s) => !documented.includes(s)),
      noSuchScript: documented.filter((s) => s === undefined || !scripts.includes(s)),
    }).toEqual({ undocumented: [], noSuchScript: [] });
  });

  it('when scripts/test-all.ts changes what it runs, then the `pnpm test` row names those scripts and vitest projects, and no other script', () => {
    const testAll = read('scripts/test-all.ts');
    // Its steps run root scripts as `pnpm -s <script>`; its vitest runs name their projects.
    const run = [...testAll.matchAll(/\['pnpm', '-s', '([^'-][^']*)'/g)].map((m) => m[1]!);
    const projects = [...testAll.matchAll(/vitestRun\('[^']*', \[([^\]]*)\]/g)].flatMap((m) => codeSpans(m[1]!.replaceAll("'", '`')));
    expect(run.length).toBeGreaterThan(0);
    expect(projects.length).toBeGreaterThan(0);

    const row = rows.find(([cell]) => scriptOf(cell!) === 'test')![1]!;
    const named = codeSpans(row)
      .map((span) => span.split(' ')[0]!)
      .filter((word) => scripts.includes(word));
    expect(named.sort()).toEqual([...run].sort());
    for (const project of projects) expect(row).toMatch(new RegExp(`\\b${project}\\b`));
  });
});

describe('README.md, the configuration table', () => {
  const rows = tableUnder(read('README.md'), 'Configuration').map(([name, byDefault]) => ({
    name: codeSpans(name!)[0]!,
    byDefault: byDefault!,
  }));
  const shape = EnvSchema.shape as Record<string, { safeParse(v: unknown): { success: boolean; data?: unknown } }>;
  /** What config.ts's schema reads a variable's text as (a number, a list, ...). */
  const readAs = (name: string, text: string | undefined) => shape[name]!.safeParse(text).data;
  /** A variable's value when it is not set (undefined: none). */
  const unsetValue = (name: string) => readAs(name, undefined);

  /** Variables read outside config.ts, and the file that reads each. */
  const READ_ELSEWHERE: Record<string, string> = { CHATBRIDGE_DEBUG: 'packages/server/src/cliProgram.ts' };
  /** Defaults loadConfig derives from other variables: the README's words, and what loadConfig does. */
  const DERIVED: Record<string, { says: string; check: () => void }> = {
    CHATBRIDGE_STORE: {
      says: '`postgres` when `DATABASE_URL` is set, else `sqlite`',
      check: () => {
        expect(loadConfig({ DATABASE_URL: 'postgres://user@db.example.com:5432/chatbridge' }).store.kind).toBe('postgres');
        expect(loadConfig({}).store.kind).toBe('sqlite');
      },
    },
    CHATBRIDGE_VALIDATE_RESPONSES: {
      says: 'on unless `NODE_ENV=production`',
      check: () => {
        expect(loadConfig({}).validateResponses).toBe(true);
        expect(loadConfig({ NODE_ENV: 'production' }).validateResponses).toBe(false);
      },
    },
  };

  it('when config.ts reads a variable, then the table has a row for it, and a row names nothing config.ts does not read', () => {
    const documented = rows.map((r) => r.name);
    const known = [...Object.keys(shape), ...Object.keys(READ_ELSEWHERE)];
    expect({
      undocumented: known.filter((name) => !documented.includes(name)),
      notRead: documented.filter((name) => !known.includes(name)),
    }).toEqual({ undocumented: [], notRead: [] });
    for (const [name, file] of Object.entries(READ_ELSEWHERE)) expect(read(file), `${file} reads ${name}`).toContain(name);
  });

  it('when the table states a default, then it is the value config.ts applies when the variable is unset', () => {
    for (const { name, byDefault } of rows.filter((r) => r.name in shape)) {
      const literal = /^`([^`]*)`$/.exec(byDefault)?.[1];
      if (literal !== undefined || byDefault === 'empty') {
        // The stated default, set, is read as exactly what config.ts makes of the variable unset.
        expect(unsetValue(name), `${name} has a default in config.ts`).not.toBeUndefined();
        expect(readAs(name, literal ?? ''), `${name}=${literal ?? ''}`).toEqual(unsetValue(name));
      } else if (byDefault === 'unset') {
        expect(unsetValue(name), `${name} has no default in config.ts`).toBeUndefined();
      } else {
        const derived = DERIVED[name];
        expect(derived, `${name}: a default the test does not know how to check: ${byDefault}`).toBeDefined();
        expect(byDefault, name).toBe(derived!.says);
        expect(unsetValue(name), `${name} is left to loadConfig`).toBeUndefined();
        derived!.check();
      }
    }
  });
});
