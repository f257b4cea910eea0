// The performance targets, checked against one run's figures. Informational: the bench's exit code
// depends only on failed scenarios, errors and non-2xx answers, never on a target.
import type { LoadFigures } from './load.ts';

export interface Measured {
  key: string;
  status: 'ok' | 'skipped' | 'failed';
  figures?: LoadFigures;
  ratio?: number;
  peakRssMB?: number;
}

export interface TargetCheck {
  description: string;
  target: string;
  actual: string;
  status: 'PASS' | 'FAIL' | 'SKIP';
}

interface Target {
  description: string;
  target: string;
  needs: string[];
  /** The measured value and whether it meets the target, given the needed scenarios' results in order. */
  check: (...r: Required<Measured>[]) => { value: string; pass: boolean };
}

const ms = (n: number) => `${n.toFixed(1)} ms`;
const x = (n: number) => `${n.toFixed(2)} x`;

const TARGETS: Target[] = [
  { description: 'getEndpoint (SQLite) req/s vs baseline', target: '>= 0.40 x', needs: ['get-sqlite'], check: (g) => ({ value: x(g.ratio), pass: g.ratio >= 0.4 }) },
  { description: 'getEndpoint (SQLite) p99', target: '<= 15 ms', needs: ['get-sqlite'], check: (g) => ({ value: ms(g.figures.p99Ms), pass: g.figures.p99Ms <= 15 }) },
  { description: 'updateEndpoint (SQLite) req/s vs baseline', target: '>= 0.18 x', needs: ['update-sqlite'], check: (u) => ({ value: x(u.ratio), pass: u.ratio >= 0.18 }) },
  { description: 'updateEndpoint (SQLite) p99', target: '<= 30 ms', needs: ['update-sqlite'], check: (u) => ({ value: ms(u.figures.p99Ms), pass: u.figures.p99Ms <= 30 }) },
  ...(['get', 'update'] as const).flatMap((op): Target[] => [
    {
      description: `${op}Endpoint PostgreSQL req/s vs SQLite`,
      target: '>= 0.50 x SQLite',
      needs: [`${op}-postgres`, `${op}-sqlite`],
      check: (p, s) => ({ value: `${x(p.figures.requestsPerSec / s.figures.requestsPerSec)} (${x(p.ratio)} baseline)`, pass: p.figures.requestsPerSec >= 0.5 * s.figures.requestsPerSec }),
    },
    {
      description: `${op}Endpoint PostgreSQL p99 vs SQLite`,
      target: '<= 2.00 x SQLite',
      needs: [`${op}-postgres`, `${op}-sqlite`],
      check: (p, s) => ({ value: `${x(p.figures.p99Ms / s.figures.p99Ms)} (${ms(p.figures.p99Ms)})`, pass: p.figures.p99Ms <= 2 * s.figures.p99Ms }),
    },
  ]),
  {
    description: 'getEndpoint, large store, req/s vs small store',
    target: '>= 0.90 x small',
    needs: ['get-sqlite-large', 'get-sqlite'],
    check: (l, s) => ({ value: x(l.figures.requestsPerSec / s.figures.requestsPerSec), pass: l.figures.requestsPerSec >= 0.9 * s.figures.requestsPerSec }),
  },
  { description: 'getEndpoint, large store, server peak RSS', target: '<= 200 MB', needs: ['get-sqlite-large'], check: (l) => ({ value: `${l.peakRssMB.toFixed(0)} MB`, pass: l.peakRssMB <= 200 }) },
];

export function checkTargets(results: Measured[]): TargetCheck[] {
  return TARGETS.map(({ description, target, needs, check }) => {
    const found = needs.map((key) => results.find((r) => r.key === key));
    const missing = needs.filter((_, i) => {
      const r = found[i];
      return r?.status !== 'ok' || !r.figures || r.ratio === undefined;
    });
    if (missing.length > 0) return { description, target, actual: `(${missing.join(', ')} not measured)`, status: 'SKIP' };
    const { value, pass } = check(...(found as Required<Measured>[]));
    return { description, target, actual: value, status: pass ? 'PASS' : 'FAIL' };
  });
}
