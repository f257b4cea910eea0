// bench/store.ts, the store-only benchmark BENCHMARKS.md quotes: it must time real committed writes
// (and say so), and decisions without writes must come out cheaper than writes.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');

it('when bench/store.ts runs, then it prints CPU per update with and without writes and verifies the writes committed', () => {
  const out = execFileSync(
    process.execPath,
    ['bench/store.ts', '--endpoints', '20', '--batch', '10', '--batches', '20', '--rounds', '3'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  const medianOf = (label: string) => {
    const m = new RegExp(`${label}\\s+CPU min [\\d.]+, q1 [\\d.]+, median ([\\d.]+) \\| wall`).exec(out);
    expect(m, out).not.toBeNull();
    return Number(m![1]);
  };
  const writes = medianOf('committed writes');
  const decisions = medianOf('decisions, no writes');
  expect(decisions).toBeGreaterThan(0);
  expect(writes).toBeGreaterThan(decisions);
  expect(out).toMatch(/verified: the writes committed \(ep-0 at version \d+\)/);
}, 60_000);
