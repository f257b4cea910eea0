import { defineConfig } from 'vitest/config';

// One vitest run, three projects: the server's own tests, the client's, and the cross-cutting
// contract/docs tests in tests/.
export default defineConfig({
  test: {
    projects: [
      { test: { name: 'server', root: 'packages/server', include: ['test/**/*.test.ts'], testTimeout: 30_000 } },
      { test: { name: 'client', root: 'packages/client', include: ['test/**/*.test.ts'], testTimeout: 30_000 } },
      { test: { name: 'contract', root: 'tests', include: ['**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 } },
    ],
  },
});
