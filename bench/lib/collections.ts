// V8's garbage collections over a scenario's window, as the server reports them on /-/metrics
// (prom-client's chatbridge_nodejs_gc_duration_seconds: the main thread's pauses, by kind). Their
// share of the window is the first sign of request objects kept past their request: the nineteenth
// and twentieth passes' "slow machine" was mostly a Set of in-flight responses that made V8 promote
// each request's objects, and it showed as collections taking 16% of the window with 38 major ones
// in 10 s (5% and one once fixed).
// The figures are a lower bound: prom-client records only the first collection of each batch that
// Node reports to its observer (a review's probe under allocation bursts: 48 of 57), and it misses
// the most when the collector is busiest. So a HIGH note can be trusted, and a share just under the
// line may really be over it. Only chatbridge's server exposes these series: the baseline and the
// floor get no note.
import { sample } from './serverMetrics.ts';

const KINDS = ['minor', 'major', 'incremental'] as const;
type Kind = (typeof KINDS)[number];

/** Running totals per kind at one moment. */
export type CollectionTotals = Record<Kind, { count: number; seconds: number }>;

/** Over this share of the window, the note says the collector is busier than it should be. */
const BUSY_SHARE = 0.1;

export function parseCollections(metricsText: string): CollectionTotals | undefined {
  const totals = {} as CollectionTotals;
  let seen = false;
  for (const kind of KINDS) {
    const count = sample(metricsText, `chatbridge_nodejs_gc_duration_seconds_count{kind="${kind}"}`);
    const seconds = sample(metricsText, `chatbridge_nodejs_gc_duration_seconds_sum{kind="${kind}"}`);
    if (count !== undefined) seen = true;
    totals[kind] = { count: count ?? 0, seconds: seconds ?? 0 };
  }
  return seen ? totals : undefined;
}

export interface Collections {
  minor: { count: number; ms: number };
  major: { count: number; ms: number };
  incremental: { count: number; ms: number };
  /** All pauses over the window's wall time. */
  share: number;
}

export function collectionsBetween(before: CollectionTotals, after: CollectionTotals, wallS: number): Collections {
  const of = (kind: Kind) => ({ count: after[kind].count - before[kind].count, ms: (after[kind].seconds - before[kind].seconds) * 1000 });
  const minor = of('minor');
  const major = of('major');
  const incremental = of('incremental');
  return { minor, major, incremental, share: (minor.ms + major.ms + incremental.ms) / 1000 / wallS };
}

/** One line for the scenario's notes. */
export function describeCollections(c: Collections): string {
  const pct = (c.share * 100).toFixed(1);
  const line =
    `V8's collections (the server's /-/metrics, at least): ${pct}% of the window; ` +
    `${c.minor.count} minor (${c.minor.ms.toFixed(0)} ms), ${c.major.count} major (${c.major.ms.toFixed(0)} ms), ` +
    `${c.incremental.count} incremental steps (${c.incremental.ms.toFixed(0)} ms)`;
  return c.share > BUSY_SHARE ? `${line}: HIGH, look for request objects kept past their request` : line;
}
