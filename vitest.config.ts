import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources (the "source" export condition), so tests
// never run against a stale build.
const resolve = { conditions: ['source'] };

// One vitest run, three projects: the server's own tests, the client's, and the cross-cutting
// contract/docs tests in tests/.
export default defineConfig({
  test: {
    projects: [
      { resolve, ssr: { resolve }, test: { name: 'server', root: 'packages/server', include: ['test/**/*.test.ts'], testTimeout: 30_000 } },
      { resolve, ssr: { resolve }, test: { name: 'client', root: 'packages/client', include: ['test/**/*.test.ts'], testTimeout: 30_000 } },
      {
        resolve,
        ssr: { resolve },
        test: { name: 'contract', root: 'tests', include: ['**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 },
      },
    ],
  },
});
