// The request scenarios' targets, checked against one run's figures. Informational: the bench's exit
// code depends only on failed scenarios, errors and non-2xx answers, never on a target.
import type { LoadFigures } from './load.ts';

export interface Measured {
  key: string;
  status: 'ok' | 'skipped' | 'failed';
  figures?: LoadFigures;
  ratio?: number;
}

type Ok = Required<Measured>;
const rps = (r: Ok) => r.figures.requestsPerSec;
const p99 = (r: Ok) => r.figures.p99Ms;

/** [description, needed scenarios, at least (>=) or at most (<=), check: [value, limit, unit]] */
const TARGETS: [string, string[], '>=' | '<=', (...r: Ok[]) => [number, number, string]][] = [
  ['getEndpoint (SQLite) req/s vs baseline', ['get-sqlite'], '>=', (g) => [g.ratio, 0.4, 'x']],
  ['getEndpoint (SQLite) p99', ['get-sqlite'], '<=', (g) => [p99(g), 15, 'ms']],
  ['updateEndpoint (SQLite) req/s vs baseline', ['update-sqlite'], '>=', (u) => [u.ratio, 0.18, 'x']],
  ['updateEndpoint (SQLite) p99', ['update-sqlite'], '<=', (u) => [p99(u), 30, 'ms']],
  ...(['get', 'update'] as const).flatMap((op): typeof TARGETS => [
    [`${op}Endpoint PostgreSQL req/s vs SQLite`, [`${op}-postgres`, `${op}-sqlite`], '>=', (p, s) => [rps(p) / rps(s), 0.5, 'x SQLite']],
    [`${op}Endpoint PostgreSQL p99 vs SQLite`, [`${op}-postgres`, `${op}-sqlite`], '<=', (p, s) => [p99(p) / p99(s), 2, 'x SQLite']],
  ]),
];

export function checkTargets(results: Measured[]) {
  return TARGETS.map(([description, needs, sense, check]) => {
    const found = needs.map((key) => results.find((r) => r.key === key && r.status === 'ok' && r.figures && r.ratio !== undefined));
    const missing = needs.filter((_, i) => !found[i]);
    if (missing.length > 0) return { description, target: '', actual: `(${missing.join(', ')} not measured)`, status: 'SKIP' };
    const [value, limit, unit] = check(...(found as Ok[]));
    const pass = sense === '>=' ? value >= limit : value <= limit;
    return { description, target: `${sense} ${limit} ${unit}`, actual: `${value.toFixed(2)} ${unit}`, status: pass ? 'PASS' : 'FAIL' };
  });
}
