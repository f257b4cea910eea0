// `pnpm test`: every check CI runs, ending with one "N passed, N failed, N skipped" line. Each
// pipeline step counts as one check; the vitest run adds one per test, and every test it did not run
// (skipped, or todo) counts as skipped. The benchmark's smoke run is not a test: .ci/run runs it as a
// step of its own.
//
// Steps marked `alongside` only read the tree, so they run one after another while vitest runs (its
// tests wait on timers and sockets much of the time); their output is printed after vitest's. The
// others write what tests also build (the client's dist/, the docs), so they run before vitest, all
// at once (each writes its own files), their output printed in order once they are done.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';

interface Step {
  name: string;
  cmd: string[];
  alongside?: true;
}

const VITEST_REPORT = '.ci-out/vitest.json';
const steps: Step[] = [
  { name: 'spec lint', cmd: ['pnpm', '-s', 'spec:lint'], alongside: true },
  { name: 'generated code up to date', cmd: ['pnpm', '-s', 'gen:check'], alongside: true },
  { name: 'typecheck', cmd: ['pnpm', '-s', 'typecheck'], alongside: true },
  { name: 'layers (dependency-cruiser)', cmd: ['pnpm', '-s', 'lint:layers'], alongside: true },
  { name: 'format and lint (Biome)', cmd: ['pnpm', '-s', 'lint'], alongside: true },
  { name: 'spec OWASP lint (Spectral)', cmd: ['pnpm', '-s', 'spec:owasp'], alongside: true },
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

const header = (step: Step) => `\n== ${step.name}: ${step.cmd.join(' ')}`;

/** Runs a step with its output (stdout and stderr, interleaved) kept for later. */
const captured = (step: Step) =>
  new Promise<{ step: Step; ok: boolean; output: string }>((resolve) => {
    const child = spawn(step.cmd[0]!, step.cmd.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', (err) => resolve({ step, ok: false, output: `${output}${err.message}\n` }));
    child.on('close', (code) => resolve({ step, ok: code === 0, output }));
  });

for (const { step, ok, output } of await Promise.all(steps.filter((s) => !s.alongside).map(captured))) {
  console.log(header(step));
  process.stdout.write(output);
  record(step.name, ok);
}

const alongside = (async () => {
  const done = [];
  for (const step of steps.filter((s) => s.alongside)) done.push(await captured(step));
  return done;
})();

/** Runs vitest on `projects`, counting its tests from its JSON report. */
async function vitestRun(label: string, projects: string[], report: string): Promise<void> {
  console.log(`\n== vitest (${label})`);
  rmSync(report, { force: true });
  const args = [
    'run',
    ...projects.flatMap((p) => ['--project', p]),
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
  ];
  const vitest = await new Promise<{ status: number | null }>((resolve) => {
    const child = spawn('vitest', args, { stdio: 'inherit' });
    child.on('error', () => resolve({ status: null }));
    child.on('close', (status) => resolve({ status }));
  });
  try {
    const counts = JSON.parse(readFileSync(report, 'utf8')) as {
      numPassedTests: number;
      numFailedTests: number;
      numPendingTests: number;
      numTodoTests: number;
      numTotalTests: number;
    };
    passed += counts.numPassedTests;
    failed += counts.numFailedTests;
    skipped += counts.numPendingTests + counts.numTodoTests;
    if (counts.numFailedTests > 0) failures.push(`${counts.numFailedTests} vitest test(s) (${label})`);
    // A suite that fails to load reports no failed test but a non-zero exit.
    if (vitest.status !== 0 && counts.numFailedTests === 0) record(`vitest run (${label}): suite errors`, false);
    if (counts.numTotalTests === 0) record(`vitest (${label}) found no tests`, false);
  } catch {
    record(`vitest report (${label})`, false);
  }
}

mkdirSync('.ci-out', { recursive: true });
await vitestRun(
  'server, server-mocks, client, integration, contract',
  ['server', 'server-mocks', 'client', 'integration', 'contract'],
  VITEST_REPORT,
);
// Timing-bound tests, by themselves once the steps alongside have finished too.
const alongsideDone = await alongside;
await vitestRun('alone', ['alone'], '.ci-out/vitest-alone.json');

for (const { step, ok, output } of alongsideDone) {
  console.log(`${header(step)} (ran alongside vitest)`);
  process.stdout.write(output);
  record(step.name, ok);
}

if (failures.length > 0) console.log(`\nFailed: ${failures.join(', ')}`);
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed === 0 ? 0 : 1);
