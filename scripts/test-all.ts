// `pnpm test`: every check CI runs, in CI's order, ending with one "N passed, N failed, N skipped"
// line. Each pipeline step counts as one check; the vitest run adds one per test, and every test it
// did not run (skipped, or todo) counts as skipped. The benchmark's smoke run is not a test: .ci/run
// runs it as a step of its own.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';

interface Step {
  name: string;
  cmd: string[];
}

const VITEST_REPORT = '.ci-out/vitest.json';
const steps: Step[] = [
  { name: 'spec lint', cmd: ['pnpm', '-s', 'spec:lint'] },
  { name: 'generated code up to date', cmd: ['pnpm', '-s', 'gen:check'] },
  { name: 'typecheck', cmd: ['pnpm', '-s', 'typecheck'] },
  { name: 'client package builds', cmd: ['pnpm', '-s', '--filter', '@chatbridge/client', 'build'] },
  { name: 'docs build', cmd: ['pnpm', '-s', 'spec:docs'] },
  { name: 'chromium present', cmd: ['bash', 'scripts/ensure-chromium.sh'] },
];

let passed = 0;
let failed = 0;
let skipped = 0;
const failures: string[] = [];
const record = (name: string, ok: boolean) => {
  if (ok) passed++;
  else {
    failed++;
    failures.push(name);
  }
};

for (const step of steps) {
  console.log(`\n== ${step.name}: ${step.cmd.join(' ')}`);
  const r = spawnSync(step.cmd[0]!, step.cmd.slice(1), { stdio: 'inherit' });
  record(step.name, r.status === 0);
}

console.log('\n== vitest (server, client, contract)');
mkdirSync('.ci-out', { recursive: true });
const vitest = spawnSync('vitest', ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${VITEST_REPORT}`], {
  stdio: 'inherit',
});
try {
  const report = JSON.parse(readFileSync(VITEST_REPORT, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests: number;
    numTotalTests: number;
  };
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + report.numTodoTests;
  if (report.numFailedTests > 0) failures.push(`${report.numFailedTests} vitest test(s)`);
  // A suite that fails to load reports no failed test but a non-zero exit.
  if (vitest.status !== 0 && report.numFailedTests === 0) record('vitest run (suite errors)', false);
  if (report.numTotalTests === 0) record('vitest found no tests', false);
} catch {
  record('vitest report', false);
}

if (failures.length > 0) console.log(`\nFailed: ${failures.join(', ')}`);
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed === 0 ? 0 : 1);
