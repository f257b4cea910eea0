// The figures of `pnpm bench:upper-bounds` (bench/upper-bounds.ts): updateEndpoint on SQLite with
// less and less of the store's work, each mode's runs summed up as medians and ranges.
import { median } from './server.ts';

/** What each mode takes away (bench/experiments/upper-bounds.patch reads it from BENCH_UPPER_BOUND). */
export const UPPER_BOUND_MODES = {
  'as-shipped': 'the store as it ships: synchronous=FULL, the event log, the outbox',
  'no-log': 'no event log (no stream replay), every fsync kept: what the log costs a durable write',
  'no-fsync': 'synchronous=OFF: no fsync at all, not durable (the most any asynchronous acknowledgement could win)',
  'no-fsync-no-log': 'synchronous=OFF and no event log (no stream replay either)',
  'no-write': 'every update decided, none written: the request and the decision alone (each decision reads its row from SQLite, as nothing committed is cached)',
} as const;

export type UpperBoundMode = keyof typeof UPPER_BOUND_MODES;

/** One run of scenario 3 in one mode, as bench/results/*.json records it. */
export interface UpperBoundRun {
  mode: UpperBoundMode;
  ratioToBaseline: number;
  requestsPerSec: number;
  cpuUsPerRequest: number;
  p99Ms: number;
}

export interface UpperBoundSummary {
  mode: UpperBoundMode;
  runs: number;
  ratio: { median: number; min: number; max: number };
  cpuUsPerRequest: number;
  p99Ms: number;
  /** Runs whose ratio reached `target`. */
  reached: number;
}

/** Per mode, in the order of UPPER_BOUND_MODES; modes without runs are left out. */
export function summariseUpperBounds(runs: UpperBoundRun[], target: number): UpperBoundSummary[] {
  return (Object.keys(UPPER_BOUND_MODES) as UpperBoundMode[]).flatMap((mode) => {
    const own = runs.filter((r) => r.mode === mode);
    if (own.length === 0) return [];
    const ratios = own.map((r) => r.ratioToBaseline);
    return [
      {
        mode,
        runs: own.length,
        ratio: { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) },
        cpuUsPerRequest: median(own.map((r) => r.cpuUsPerRequest)),
        p99Ms: median(own.map((r) => r.p99Ms)),
        reached: ratios.filter((r) => r >= target).length,
      },
    ];
  });
}

/** The summary as a Markdown table, ready for BENCHMARKS.md. */
export function upperBoundsTable(summaries: UpperBoundSummary[], target: number): string {
  const rows = summaries.map(
    (s) =>
      `| ${s.mode} | ${s.ratio.median.toFixed(2)} (${s.ratio.min.toFixed(2)}-${s.ratio.max.toFixed(2)}) | ` +
      `${s.reached}/${s.runs} | ${s.cpuUsPerRequest.toFixed(0)} | ${s.p99Ms.toFixed(1)} | ${UPPER_BOUND_MODES[s.mode]} |`,
  );
  return [
    `| mode | × baseline, median (range) | runs ≥ ${target} | µs CPU/update | p99 ms | what the store skips |`,
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
