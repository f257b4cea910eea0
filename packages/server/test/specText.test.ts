// The spec's text stays within Latin-1. V8 keeps strings sliced from a source that holds any other
// character as two-byte strings, even when their own characters are plain ASCII. The server loads
// the bundled spec at start-up, and with one "…" in a description every GET executed 21% more
// instructions (`pnpm bench:instructions`), encoding its response from UTF-16 (seventeenth pass).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isProblemStatus, problemFor } from '../src/http/problem.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? yamlFiles(join(dir, e.name)) : e.name.endsWith('.yaml') ? [join(dir, e.name)] : [],
  );
}

describe('the spec as text', () => {
  it('when the spec and its bundle are read, then they hold no character outside Latin-1', () => {
    const files = [...yamlFiles(join(ROOT, 'openapi')), join(ROOT, 'packages/api/openapi.bundled.yaml')];
    expect(files.length).toBeGreaterThan(10);
    const offending = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (/[^\u0000-\u00ff]/u.test(line) ? [`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(offending).toEqual([]);
  });
});

describe('the spec\'s problem types', () => {
  it('when the server can answer a problem of some status, then the table of the Problem schema documents its type fragment with that status', () => {
    const spec = readFileSync(join(ROOT, 'openapi/components/schemas/Problem.yaml'), 'utf8');
    const statuses = Array.from({ length: 500 }, (_, i) => i + 100).filter(isProblemStatus);
    expect(statuses.length).toBeGreaterThan(10);
    const undocumented = statuses.flatMap((status) => {
      const fragment = problemFor(status, 'x').type.split('#')[1];
      return spec.includes(`| \`${fragment}\` | ${status} |`) ? [] : [`${status} #${fragment}`];
    });
    expect(undocumented).toEqual([]);
  });
});
