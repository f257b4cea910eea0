// The performance targets, checked against one run's figures. Informational: the bench's
// exit code depends only on errors and non-2xx answers, never on a target.
import type { ScenarioResult } from './types.ts';

/** Issue 6's target for updateEndpoint on SQLite, × the baseline (bench:upper-bounds measures against it too). */
export const UPDATE_SQLITE_MIN_RATIO = 0.25;

export interface TargetCheck {
  id: string;
  description: string;
  target: string;
  actual: string;
  status: 'PASS' | 'FAIL' | 'SKIP';
  /** Why a check was skipped. */
  reason?: string;
}

const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);

export function checkTargets(results: ScenarioResult[]): TargetCheck[] {
  const ok = (key: string) => {
    const r = results.find((s) => s.key === key);
    return r?.status === 'ok' && r.figures ? r : undefined;
  };
  const checks: TargetCheck[] = [];
  const add = (
    id: string,
    description: string,
    target: string,
    needs: string[],
    measure: () => { pass: boolean; actual: string },
  ) => {
    const missing = needs.filter((k) => !ok(k));
    if (missing.length > 0) {
      const why = missing.map((k) => {
        const r = results.find((s) => s.key === k);
        return `${k} ${r ? (r.status === 'ok' ? 'has no figures' : r.status) : 'not run'}`;
      });
      checks.push({ id, description, target, actual: '-', status: 'SKIP', reason: why.join(', ') });
      return;
    }
    const { pass, actual } = measure();
    checks.push({ id, description, target, actual, status: pass ? 'PASS' : 'FAIL' });
  };
  const fig = (key: string) => ok(key)!.figures!;
  const ratio = (key: string) => ok(key)!.ratioToBaseline!;

  add('get-sqlite-ratio', 'getEndpoint (SQLite) req/s vs baseline', '>= 0.40', ['baseline', 'get-sqlite'], () => ({
    pass: ratio('get-sqlite') >= 0.4,
    actual: f2(ratio('get-sqlite')),
  }));
  add('get-sqlite-p99', 'getEndpoint (SQLite) p99 latency', '<= 15 ms', ['get-sqlite'], () => ({
    pass: fig('get-sqlite').p99Ms <= 15,
    actual: `${f1(fig('get-sqlite').p99Ms)} ms`,
  }));
  add('update-sqlite-ratio', 'updateEndpoint (SQLite) req/s vs baseline', `>= ${UPDATE_SQLITE_MIN_RATIO}`, ['baseline', 'update-sqlite'], () => ({
    pass: ratio('update-sqlite') >= UPDATE_SQLITE_MIN_RATIO,
    actual: f2(ratio('update-sqlite')),
  }));
  add('update-sqlite-p99', 'updateEndpoint (SQLite) p99 latency', '<= 30 ms', ['update-sqlite'], () => ({
    pass: fig('update-sqlite').p99Ms <= 30,
    actual: `${f1(fig('update-sqlite').p99Ms)} ms`,
  }));
  for (const op of ['get', 'update'] as const) {
    const pg = `${op}-postgres`;
    const lite = `${op}-sqlite`;
    const name = op === 'get' ? 'getEndpoint' : 'updateEndpoint';
    add(`${pg}-rps`, `${name} PostgreSQL req/s within 2x of SQLite`, '>= 0.50 x SQLite', [pg, lite], () => {
      const r = fig(pg).requestsPerSec / fig(lite).requestsPerSec;
      return { pass: r >= 0.5, actual: `${f2(r)} x` };
    });
    add(`${pg}-p99`, `${name} PostgreSQL p99 within 2x of SQLite`, '<= 2.00 x SQLite', [pg, lite], () => {
      const r = fig(pg).p99Ms / fig(lite).p99Ms;
      return { pass: r <= 2, actual: `${f2(r)} x (${f1(fig(pg).p99Ms)} ms)` };
    });
  }
  add('get-large-rps', 'getEndpoint, large store, req/s within 10% of small store', '>= 0.90 x small', ['get-sqlite-large', 'get-sqlite'], () => {
    const r = fig('get-sqlite-large').requestsPerSec / fig('get-sqlite').requestsPerSec;
    return { pass: r >= 0.9, actual: `${f2(r)} x` };
  });
  add('get-large-rss', 'getEndpoint, large store, server peak RSS', '<= 200 MB', ['get-sqlite-large'], () => {
    const rss = ok('get-sqlite-large')!.server?.peakRssMB ?? NaN;
    return { pass: rss <= 200, actual: `${f1(rss)} MB` };
  });
  return checks;
}
