// Medians over several full runs. One run on a shared VM moves by 15-25% (BENCHMARKS.md, "Reading the
// figures"), so quote the median of several:
//
//   pnpm exec node bench/medians.ts              the last 3 full runs in bench/results
//   pnpm exec node bench/medians.ts --last 6
//   pnpm exec node bench/medians.ts FILE...      these reports (bench/results/<timestamp>.json)
//
// Full runs only: quick, profiled and partial runs measure something else. Timestamped reports stay
// local (bench/results/.gitignore), so this works on the runs made on this machine.
//
// Ratios are each report's ratioToBaseline: over the baseline measured beside each scenario in newer
// reports (baseline.ratios "adjacent"), over the mean of its start and end runs (1 and 1b) in older
// ones. Both are read; the header says when the runs mix the two.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median } from './lib/server.ts';
import type { TargetCheck } from './lib/targets.ts';
import type { ScenarioResult } from './lib/types.ts';

interface Report {
  mode: string;
  startedAt: string;
  settings: { profiled: string[] };
  /** `ratios` is absent in reports whose ratios are over the mean of 1 and 1b. */
  baseline?: { requestsPerSec: number | null; ratios?: string };
  scenarios: ScenarioResult[];
  targets: TargetCheck[];
}

const RESULTS = join(import.meta.dirname, 'results');

const { values: opts, positionals } = parseArgs({ options: { last: { type: 'string', default: '3' } }, allowPositionals: true });

function reports(): { name: string; report: Report }[] {
  const names =
    positionals.length > 0
      ? positionals
      : readdirSync(RESULTS)
          .filter((f) => /^\d{4}-\d\d-\d\dT[\d-]+Z\.json$/.test(f)) // full runs: no -quick, -profile, -partial
          .sort()
          .slice(-Number(opts.last))
          .map((f) => join(RESULTS, f));
  const loaded = names.map((name) => ({ name, report: JSON.parse(readFileSync(name, 'utf8')) as Report }));
  const wrong = loaded.filter(({ report }) => report.mode !== 'full' || report.settings.profiled.length > 0);
  if (wrong.length > 0) throw new Error(`these are not full, unprofiled runs: ${wrong.map((w) => w.name).join(', ')}`);
  return loaded;
}

/** "0.38 (0.37-0.42)": the median and the range. */
function summary(values: number[], digits: number): string {
  if (values.length === 0) return '-';
  const f = (n: number) => n.toFixed(digits);
  return `${f(median(values))} (${f(Math.min(...values))}-${f(Math.max(...values))})`;
}

function main(): void {
  const runs = reports();
  if (runs.length === 0) throw new Error(`no full runs in ${RESULTS}; run pnpm bench first`);
  console.log(`${runs.length} full run(s): ${runs.map((r) => r.report.startedAt.slice(0, 16).replace('T', ' ')).join(', ')} UTC`);
  const adjacent = runs.filter((r) => r.report.baseline?.ratios === 'adjacent').length;
  console.log(
    adjacent === runs.length
      ? 'ratios over the baseline measured beside each scenario\n'
      : adjacent === 0
        ? 'ratios over the mean of the baseline at the start and the end of each run (1 and 1b)\n'
        : `ratios: ${adjacent} run(s) over the baseline measured beside each scenario, ${runs.length - adjacent} over the mean of 1 and 1b (older reports)\n`,
  );

  const keys = [...new Set(runs.flatMap((r) => r.report.scenarios.map((s) => s.key)))];
  const row = (cells: string[]) => console.log(cells.map((c, i) => (i === 0 ? c.padEnd(28) : c.padStart(20))).join(''));
  row(['scenario', 'x baseline', 'baseline req/s', 'p99 ms', 'us CPU/req', 'peak RSS MB']);
  for (const key of keys) {
    const found = runs.flatMap(({ report }) => {
      const s = report.scenarios.find((x) => x.key === key);
      return s?.figures === undefined ? [] : [{ s, report }];
    });
    const measured = found.map((f) => f.s);
    // The req/s each ratio was taken over; older reports took them all over baseline.requestsPerSec.
    const over = found.flatMap(({ s, report }) => {
      if (s.ratioToBaseline === undefined) return [];
      const rps = s.baselineRequestsPerSec ?? report.baseline?.requestsPerSec;
      return rps === undefined || rps === null ? [] : [rps];
    });
    row([
      key,
      summary(measured.flatMap((s) => (s.ratioToBaseline === undefined ? [] : [s.ratioToBaseline])), 3),
      summary(over, 0),
      summary(measured.map((s) => s.figures!.p99Ms), 1),
      summary(measured.flatMap((s) => (s.server?.cpuUsPerRequest === undefined ? [] : [s.server.cpuUsPerRequest])), 0),
      summary(measured.flatMap((s) => (s.server?.peakRssMB === undefined ? [] : [s.server.peakRssMB])), 0),
    ]);
  }

  console.log('\nTargets: the median of what each run printed (rounded there), and in how many runs the target held');
  const ids = [...new Set(runs.flatMap((r) => r.report.targets.map((t) => t.id)))];
  for (const id of ids) {
    const checks = runs.map((r) => r.report.targets.find((t) => t.id === id)).filter((t): t is TargetCheck => t !== undefined && t.status !== 'SKIP');
    if (checks.length === 0) continue;
    const actuals = checks.map((t) => Number.parseFloat(t.actual));
    const passed = checks.filter((t) => t.status === 'PASS').length;
    console.log(`  ${checks[0]!.description.padEnd(62)} ${checks[0]!.target.padEnd(18)} ${summary(actuals, 2).padEnd(20)} held in ${passed} of ${checks.length}`);
  }
}

try {
  main();
} catch (err) {
  console.error(`bench/medians: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
