// `pnpm bench:upper-bounds`: how far could updateEndpoint on SQLite go if the store did less of its
// work? The measurement behind BENCHMARKS.md's twenty-third pass, for anyone to repeat.
//
//   pnpm bench:upper-bounds [--rounds 2] [--duration 10] [--modes as-shipped,no-log,no-fsync,no-fsync-no-log,no-write]
//
// It makes a scratch worktree of HEAD, applies bench/experiments/upper-bounds.patch there (the SQLite
// store reads BENCH_UPPER_BOUND and skips the event log, the fsync, both, or the whole write), and runs
// `pnpm bench --only=1,3` there once per mode and round, the modes alternating (reversed every other
// round, so a drift of the machine falls on every mode alike). Each ratio is over the baseline
// measured beside it, as in `pnpm bench`. The patch never ships: the worktree is removed at the end.
// Only `as-shipped` is a real service; the other modes are ceilings, not options (see the table).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { makeTempDir, removeTempDir } from './lib/procs.ts';
import { UPPER_BOUND_MODES, type UpperBoundMode, type UpperBoundRun, summariseUpperBounds, upperBoundsTable } from './lib/upperBounds.ts';
import { UPDATE_SQLITE_MIN_RATIO } from './lib/targets.ts';
import type { ScenarioResult } from './lib/types.ts';

const ROOT = resolve(import.meta.dirname, '..');
const PATCH = join(ROOT, 'bench', 'experiments', 'upper-bounds.patch');
const TARGET = UPDATE_SQLITE_MIN_RATIO;

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    duration: { type: 'string' },
    modes: { type: 'string', default: Object.keys(UPPER_BOUND_MODES).join(',') },
  },
});
const rounds = Number(opts.rounds);
const modes = opts.modes!.split(',') as UpperBoundMode[];
const unknown = modes.filter((m) => !(m in UPPER_BOUND_MODES));
if (!Number.isInteger(rounds) || rounds < 1 || unknown.length > 0 || modes.length === 0) {
  console.error(`pnpm bench:upper-bounds: --rounds is a whole number >= 1; --modes from ${Object.keys(UPPER_BOUND_MODES).join(', ')}`);
  process.exit(2);
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env, quiet = false): number {
  const r = spawnSync(cmd, args, { cwd, env, stdio: quiet ? 'ignore' : 'inherit' });
  return r.status ?? 1;
}

function must(cmd: string, args: string[], cwd: string): void {
  if (run(cmd, args, cwd) !== 0) throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}`);
}

const reportsIn = (dir: string) => new Set(readdirSync(dir).filter((f) => f.endsWith('-partial.json')));

/** Scenario 3 of the report `pnpm bench --only=1,3` wrote in `tree` (the only new partial report). */
function measureOnce(tree: string, mode: UpperBoundMode): UpperBoundRun {
  const results = join(tree, 'bench', 'results');
  const before = reportsIn(results);
  const args = ['-s', 'bench', '--only=1,3', ...(opts.duration ? ['--duration', opts.duration] : [])];
  run('pnpm', args, tree, { ...process.env, BENCH_UPPER_BOUND: mode });
  if (mode === 'no-write') console.log('   (no-write fails the bench\'s read-back check by design: nothing was written; its figures still count)');
  const added = [...reportsIn(results)].filter((f) => !before.has(f));
  if (added.length !== 1) throw new Error(`expected one new report in ${results}, found ${added.length}`);
  const report = JSON.parse(readFileSync(join(results, added[0]!), 'utf8')) as { scenarios: ScenarioResult[] };
  const s = report.scenarios.find((x) => x.n === 3);
  if (!s?.figures || s.ratioToBaseline === undefined || s.server?.cpuUsPerRequest === undefined) throw new Error(`${mode}: scenario 3 has no figures (${s?.reason ?? 'missing'})`);
  if (s.figures.errors > 0 || s.figures.non2xx > 0) throw new Error(`${mode}: ${s.figures.errors} errors, ${s.figures.non2xx} non-2xx answers`);
  return {
    mode,
    ratioToBaseline: s.ratioToBaseline,
    requestsPerSec: s.figures.requestsPerSec,
    cpuUsPerRequest: s.server.cpuUsPerRequest,
    p99Ms: s.figures.p99Ms,
  };
}

const scratch = makeTempDir('chatbridge-upper-bounds-');
const tree = join(scratch, 'tree');
const runs: UpperBoundRun[] = [];
try {
  must('git', ['worktree', 'add', '--detach', tree, 'HEAD'], ROOT);
  must('git', ['apply', PATCH], tree);
  if (run('pnpm', ['install', '--frozen-lockfile', '--offline'], tree, process.env, true) !== 0) must('pnpm', ['install', '--frozen-lockfile'], tree);
  for (let round = 1; round <= rounds; round++) {
    for (const mode of round % 2 === 1 ? modes : [...modes].reverse()) {
      console.log(`\n== round ${round} of ${rounds}: ${mode} (${UPPER_BOUND_MODES[mode]})`);
      const r = measureOnce(tree, mode);
      runs.push(r);
      console.log(`   ${mode}: ${r.ratioToBaseline.toFixed(2)} × baseline, ${r.cpuUsPerRequest.toFixed(0)} µs CPU per update, p99 ${r.p99Ms.toFixed(1)} ms`);
    }
  }
} finally {
  run('git', ['worktree', 'remove', '--force', tree], ROOT, process.env, true);
  removeTempDir(scratch);
}

const summaries = summariseUpperBounds(runs, TARGET);
console.log(`\nupdateEndpoint on SQLite, ${rounds} round(s) per mode (target ${TARGET} × baseline):\n`);
console.log(upperBoundsTable(summaries, TARGET));
const out = join(ROOT, 'bench', 'results');
mkdirSync(out, { recursive: true });
const file = join(out, `${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}Z-upper-bounds.json`);
writeFileSync(file, `${JSON.stringify({ tool: 'bench:upper-bounds', target: TARGET, runs, summaries }, null, 2)}\n`);
console.log(`\nWrote ${file}`);
