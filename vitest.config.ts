import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources (the "source" export condition), so tests
// never run against a stale build.
const resolve = { conditions: ['source'] };

// Tests that start processes (the built server, the CLI, pnpm pack, psql): the integration project.
// The server's and the client's own projects run in-process only.
const SPAWNING = [
  'packages/server/test/build.test.ts',
  'packages/server/test/cli.test.ts',
  'packages/server/test/faults.test.ts',
  'packages/server/test/multiInstance.test.ts',
  'packages/server/test/startup.test.ts',
  'packages/server/test/store/postgres.test.ts',
  'packages/client/test/pack.test.ts',
];
const excluding = (root: string) => [...configDefaults.exclude, ...SPAWNING.filter((f) => f.startsWith(`${root}/`)).map((f) => f.slice(root.length + 1))];

// One vitest run, four projects: the server's unit tests, the client's, the integration tests that
// spawn processes, and the cross-cutting contract/docs tests in tests/.
export default defineConfig({
  test: {
    // As many test files at a time as cores, at least two (vitest's default is one fewer than cores:
    // a single file at a time on two). Most files spend much of their time waiting on timers,
    // sockets and child processes, so the second keeps both cores busy; more workers than cores
    // starve the tests that bound a time (a drain, a lock wait) of CPU.
    maxWorkers: Math.max(2, availableParallelism()),
    projects: [
      {
        resolve,
        ssr: { resolve },
        test: { name: 'server', root: 'packages/server', include: ['test/**/*.test.ts'], exclude: excluding('packages/server'), testTimeout: 30_000 },
      },
      {
        resolve,
        ssr: { resolve },
        test: { name: 'client', root: 'packages/client', include: ['test/**/*.test.ts'], exclude: excluding('packages/client'), testTimeout: 30_000 },
      },
      { resolve, ssr: { resolve }, test: { name: 'integration', include: SPAWNING, testTimeout: 30_000, hookTimeout: 60_000 } },
      {
        resolve,
        ssr: { resolve },
        test: { name: 'contract', root: 'tests', include: ['**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 },
      },
    ],
  },
});
