// Every problem the server can answer is documented in the spec's table of problem types.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isProblemStatus, problemFor } from '../src/http/problem.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe("the spec's problem types", () => {
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
