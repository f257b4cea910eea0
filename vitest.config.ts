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
    // Three test files at a time whatever the core count (vitest's default is one fewer worker than
    // cores: a single one on a 2-core machine). Most files spend their time waiting on timers,
    // sockets and child processes, so a third keeps both cores busy.
    maxWorkers: 3,
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
      { resolve, ssr: { resolve }, test: { name: 'integration', include: SPAWNING, testTimeout: 30_000 } },
      {
        resolve,
        ssr: { resolve },
        test: { name: 'contract', root: 'tests', include: ['**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 },
      },
    ],
  },
});
