// bench/store.ts, the store-only benchmark BENCHMARKS.md quotes: it must time real committed writes
// (and say so), and decisions without writes must come out cheaper than writes.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');

it('when bench/store.ts runs, then it prints CPU per update with and without writes, splits the group commit, and verifies the writes committed', () => {
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
  // The group commit's own timing: a COMMIT that writes (and syncs) costs more than an empty one.
  const commits = [...out.matchAll(/in the group commit: statements min [\d.]+, q1 [\d.]+, median [\d.]+ \| COMMIT min [\d.]+, q1 [\d.]+, median ([\d.]+)/g)];
  expect(commits, out).toHaveLength(2);
  const [writeCommit, emptyCommit] = commits.map((m) => Number(m[1]));
  expect(writeCommit).toBeGreaterThan(emptyCommit!);
}, 60_000);
