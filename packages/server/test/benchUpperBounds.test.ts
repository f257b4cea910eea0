// pnpm bench:upper-bounds (bench/upper-bounds.ts): the experiment patch still applies to the store it
// was written for, and each mode's runs are summed up as BENCHMARKS.md quotes them.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type UpperBoundRun, summariseUpperBounds, upperBoundsTable } from '../../../bench/lib/upperBounds.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

const run = (mode: UpperBoundRun['mode'], ratioToBaseline: number, cpuUsPerRequest = 90, p99Ms = 12): UpperBoundRun => ({
  mode,
  ratioToBaseline,
  requestsPerSec: ratioToBaseline * 50_000,
  cpuUsPerRequest,
  p99Ms,
});

describe('pnpm bench:upper-bounds', () => {
  it('when the SQLite store changes, then the experiment patch still applies to it (or this fails and the patch is redone)', () => {
    // Throws, with git's complaint, when a hunk no longer matches packages/server/src/store/sqlite.ts.
    expect(() =>
      execFileSync('git', ['apply', '--check', join('bench', 'experiments', 'upper-bounds.patch')], { cwd: ROOT, stdio: 'pipe' }),
    ).not.toThrow();
  });

  it('when modes have runs, then each gets the median and range of its ratios, median CPU and p99, and how many runs reached the target, in the modes\' order', () => {
    const summaries = summariseUpperBounds(
      [run('no-write', 0.28, 70, 6), run('as-shipped', 0.18, 97, 14), run('as-shipped', 0.2, 93, 12), run('no-write', 0.26, 72, 7), run('as-shipped', 0.19, 95, 13)],
      0.25,
    );
    expect(summaries.map((s) => s.mode)).toEqual(['as-shipped', 'no-write']);
    expect(summaries[0]).toEqual({ mode: 'as-shipped', runs: 3, ratio: { median: 0.19, min: 0.18, max: 0.2 }, cpuUsPerRequest: 95, p99Ms: 13, reached: 0 });
    expect(summaries[1]).toMatchObject({ runs: 2, ratio: { median: 0.27, min: 0.26, max: 0.28 }, cpuUsPerRequest: 71, reached: 2 });
  });

  it('when summed up, then the Markdown table has a row per mode with what that mode skips', () => {
    const table = upperBoundsTable(summariseUpperBounds([run('no-fsync', 0.23, 86, 11.2)], 0.25), 0.25);
    const lines = table.split('\n');
    expect(lines[0]).toContain('runs ≥ 0.25');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatch(/^\| no-fsync \| 0\.23 \(0\.23-0\.23\) \| 0\/1 \| 86 \| 11\.2 \| synchronous=OFF/);
  });
});
