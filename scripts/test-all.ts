// `pnpm test`: every check CI runs, in CI's order, ending with one "N passed, N failed" line.
// Each pipeline step counts as one check; the vitest run adds one per test.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';

interface Step {
  name: string;
  cmd: string[];
}

const VITEST_REPORT = '.ci-out/vitest.json';
const steps: Step[] = [
  { name: 'spec lint', cmd: ['pnpm', '-s', 'spec:lint'] },
  { name: 'spec OWASP lint (Spectral)', cmd: ['pnpm', '-s', 'spec:owasp'] },
  { name: 'generated code up to date', cmd: ['pnpm', '-s', 'gen:check'] },
  { name: 'typecheck', cmd: ['pnpm', '-s', 'typecheck'] },
  { name: 'client package builds', cmd: ['pnpm', '-s', '--filter', '@chatbridge/client', 'build'] },
  { name: 'docs build', cmd: ['pnpm', '-s', 'spec:docs'] },
  { name: 'chromium present', cmd: ['bash', 'scripts/ensure-chromium.sh'] },
];

let passed = 0;
let failed = 0;
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
  const report = JSON.parse(readFileSync(VITEST_REPORT, 'utf8')) as { numPassedTests: number; numFailedTests: number; numTotalTests: number };
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  if (report.numFailedTests > 0) failures.push(`${report.numFailedTests} vitest test(s)`);
  // A suite that fails to load reports no failed test but a non-zero exit.
  if (vitest.status !== 0 && report.numFailedTests === 0) record('vitest run (suite errors)', false);
  if (report.numTotalTests === 0) record('vitest found no tests', false);
} catch {
  record('vitest report', false);
}

// The benchmark's smoke run (under a minute): figures printed, targets not asserted; it fails only
// when a scenario cannot run or a request errors or gets a non-2xx answer.
console.log('\n== benchmark smoke run: pnpm bench --quick');
record('benchmark smoke run', spawnSync('pnpm', ['-s', 'bench', '--quick'], { stdio: 'inherit' }).status === 0);

if (failures.length > 0) console.log(`\nFailed: ${failures.join(', ')}`);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
