import { globSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Node's compile cache for every process the run starts (vitest's workers, and the servers, CLIs and
// builds the integration tests spawn, some hundred in all): each loads the same modules, and
// compiling them is much of a process's start-up. Under node_modules, so a fresh clone starts
// without one; Node checks every entry against its source, so an edited file is compiled anew.
process.env.NODE_COMPILE_CACHE ??= fileURLToPath(new URL('node_modules/.cache/node-compile-cache', import.meta.url));

// Workspace packages resolve to their TypeScript sources (the "source" export condition), so tests
// never run against a stale build.
const resolve = { conditions: ['source'] };

// Tests that start processes (the built server, the CLI, pnpm pack, psql): the integration project.
// The server's and the client's own projects run in-process only, and a setup file makes starting a
// process there fail.
const SPAWNING = [
  'packages/server/test/build.test.ts',
  'packages/server/test/cli.test.ts',
  'packages/server/test/cliEnvFile.test.ts',
  'packages/server/test/entryPoints.test.ts',
  'packages/server/test/botCli.test.ts',
  'packages/server/test/faults.test.ts',
  'packages/server/test/messageCrash.test.ts',
  'packages/server/test/multiInstance.test.ts',
  'packages/server/test/portability/exportImport.test.ts',
  'packages/server/test/portability/importFromOriginal.test.ts',
  'packages/server/test/processLifecycle.test.ts',
  'packages/server/test/startup.test.ts',
  'packages/server/test/store/postgres.test.ts',
  'packages/client/test/pack.test.ts',
];
// Tests that bound how fast the server answers while one tenant loads it: they run by themselves,
// after the others (`pnpm test` runs this project on its own), so that what they time is the
// server under that load, not the rest of the suite sharing the two cores.
const ALONE = ['packages/server/test/http/streamIsolation.test.ts'];
const unitSetup = [new URL('scripts/vitest-no-processes.ts', import.meta.url).pathname];
const excluding = (root: string) => [
  ...configDefaults.exclude,
  ...[...SPAWNING, ...ALONE].filter((f) => f.startsWith(`${root}/`)).map((f) => f.slice(root.length + 1)),
];

// The server's unit tests share one module graph per worker (isolate: false): loading the server's
// modules (Express, the validator, Ajv, zod) anew for each of some eighty files was about half of
// the project's CPU time, and its modules keep no state between files (each test starts its own
// server and store). A file that replaces a module (vi.mock) needs a graph of its own, or the mock
// would miss modules already loaded and reach files after it: those run in the isolated project
// server-mocks, found by their vi.mock calls.
const ROOT = fileURLToPath(new URL('.', import.meta.url));
const MOCKING = globSync('packages/server/test/**/*.test.ts', { cwd: ROOT }).filter((f) =>
  /\bvi\.(mock|doMock)\(/.test(readFileSync(join(ROOT, f), 'utf8')),
);
const inServer = (files: string[]) => files.map((f) => f.slice('packages/server/'.length));

// The files that take longest start first, whatever their project: vitest orders files by project
// name, then by their durations in its cache (which a fresh clone lacks), and the longest file of the
// last project would otherwise run on alone at the end. The property tests are most of the run's CPU;
// the others mostly wait (processes, timers) and fill the other core.
const LONGEST_FIRST = ['property/hostile.test.ts', 'faults.test.ts', 'cli.test.ts', 'http/relay.test.ts', 'store/postgres.test.ts'];
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.findIndex((name) => f.moduleId.endsWith(`/${name}`));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    const sorted = await super.sort(files);
    return sorted
      .map((f, i) => ({ f, i }))
      .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i)
      .map(({ f }) => f);
  }
}

// Five projects: the server's unit tests, the client's, the integration tests that spawn processes,
// the cross-cutting contract/docs tests in tests/, and the timing-bound tests that run alone.
export default defineConfig({
  test: {
    // As many test files at a time as cores, at least two (vitest's default is one fewer than cores:
    // a single file at a time on two). Most files spend much of their time waiting on timers,
    // sockets and child processes, so the second keeps both cores busy; more workers than cores
    // starve the tests that bound a time (a drain, a lock wait) of CPU.
    maxWorkers: Math.max(2, availableParallelism()),
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        resolve,
        ssr: { resolve },
        test: {
          name: 'server',
          root: 'packages/server',
          include: ['test/**/*.test.ts'],
          exclude: [...excluding('packages/server'), ...inServer(MOCKING)],
          setupFiles: unitSetup,
          testTimeout: 30_000,
          isolate: false,
        },
      },
      {
        resolve,
        ssr: { resolve },
        test: {
          name: 'server-mocks',
          root: 'packages/server',
          include: inServer(MOCKING),
          setupFiles: unitSetup,
          testTimeout: 30_000,
        },
      },
      {
        resolve,
        ssr: { resolve },
        test: {
          name: 'client',
          root: 'packages/client',
          include: ['test/**/*.test.ts'],
          exclude: excluding('packages/client'),
          setupFiles: unitSetup,
          testTimeout: 30_000,
          // As the server's: one module graph per worker (no client test replaces a module).
          isolate: false,
        },
      },
      { resolve, ssr: { resolve }, test: { name: 'integration', include: SPAWNING, testTimeout: 30_000, hookTimeout: 60_000 } },
      { resolve, ssr: { resolve }, test: { name: 'alone', include: ALONE, testTimeout: 60_000, hookTimeout: 60_000 } },
      {
        resolve,
        ssr: { resolve },
        test: { name: 'contract', root: 'tests', include: ['**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 },
      },
    ],
  },
});
