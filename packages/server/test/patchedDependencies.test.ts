// patches/README.md documents every patch of a dependency. pnpm applies a patch only to the exact
// version it names: after an upgrade the patch silently stops applying, and what it bought is lost.
// This test says so instead.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const requireFromServer = createRequire(join(ROOT, 'packages/server/package.json'));
const patched = Object.entries(
  (parseYaml(readFileSync(join(ROOT, 'pnpm-workspace.yaml'), 'utf8')) as { patchedDependencies?: Record<string, string> })
    .patchedDependencies ?? {},
);

/** The lines each file of a unified diff adds, by the file's path in the package. */
function addedLines(diff: string): Map<string, string[]> {
  const byFile = new Map<string, string[]>();
  let lines: string[] = [];
  for (const line of diff.split('\n')) {
    if (line.startsWith('+++ ')) byFile.set(line.replace(/^\+\+\+ b\//, ''), (lines = []));
    else if (line.startsWith('+')) lines.push(line.slice(1));
  }
  return byFile;
}

describe('patched dependencies', () => {
  it.each(patched)('when %s is installed, then it is that version with every line of its patch in place', (spec, patchFile) => {
    const at = spec.lastIndexOf('@');
    const [name, version] = [spec.slice(0, at), spec.slice(at + 1)];
    const packageDir = dirname(requireFromServer.resolve(`${name}/package.json`));
    expect((JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string }).version).toBe(version);
    for (const [file, lines] of addedLines(readFileSync(join(ROOT, patchFile), 'utf8'))) {
      const installed = readFileSync(join(packageDir, file), 'utf8');
      for (const line of lines) expect(installed, `${file} lacks a line of ${patchFile}`).toContain(line);
    }
  });
});
