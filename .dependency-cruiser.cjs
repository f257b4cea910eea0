// Layer rules, checked by `pnpm lint:layers` (part of `pnpm test`). The server's rooms point inward:
// domain/ (the rules) knows nothing of how requests arrive, where records are kept or how messages
// leave; the store knows nothing of HTTP; tests exercise the product, never the benchmark harness.

/**
 * The composition root: the files at the top of packages/server/src that assemble the running server
 * and nothing else. main.ts and serverProcess.ts (the process: configuration, store, signals),
 * service.ts (the dependencies), server.ts (the listeners) and app.ts (the Express app and its handlers).
 */
const COMPOSITION_ROOT = '^packages/server/src/(main|serverProcess|service|server|app)\\.ts$';

/**
 * Database drivers, as dependency-cruiser resolves them: npm packages (pnpm's layout included) and
 * Node's own SQLite. Any driver added later belongs in this list.
 */
const DATABASE_DRIVERS =
  '(^|/)node_modules/(pg|pg-[^/]+|postgres|@neondatabase/[^/]+|better-sqlite3|sqlite3|sqlite|@libsql/[^/]+|mysql2?|mariadb|tedious|oracledb|mongodb|ioredis|redis)/|^(node:)?sqlite$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'handlers-only-from-the-composition-root',
      comment:
        'Handlers are built and wired by the composition root (app.ts: buildHandlers); nothing else, tests included, reaches them except through HTTP.',
      severity: 'error',
      from: { pathNot: [COMPOSITION_ROOT, '^packages/server/src/handlers/'] },
      to: { path: '^packages/server/src/handlers/' },
    },
    {
      name: 'only-the-store-opens-databases',
      comment: 'Connections are opened by store/ adapters only; everything else reaches the database through the port.',
      severity: 'error',
      from: { path: '^packages/server/src/', pathNot: '^packages/server/src/store/' },
      to: { path: DATABASE_DRIVERS },
    },
    {
      name: 'domain-is-pure',
      comment: 'domain/ holds the rules as pure functions: it imports no adapter or transport.',
      severity: 'error',
      from: { path: '^packages/server/src/domain/' },
      to: {
        path: '^packages/server/src/(http|store|delivery|events|relay|handlers|observability|admin|portability|spec)/|^packages/server/src/(logger|config|service|server|serverProcess|main|app|cli)\\.ts$',
      },
    },
    {
      name: 'store-is-an-adapter',
      comment: 'Storage adapters are driven through the port; they never see requests, streams, handlers or delivery.',
      severity: 'error',
      from: { path: '^packages/server/src/store/' },
      to: { path: '^packages/server/src/(http|handlers|events|relay|delivery)/' },
    },
    {
      name: 'http-sees-store-ports-only',
      comment:
        'http/ (and the handlers, streams, relay and admin it drives) use the store through its port types; the adapters (sqlite/, postgres/, their shared sql/) and the code that picks one (open.ts) belong to the composition roots.',
      severity: 'error',
      from: { path: '^packages/server/src/(http|handlers|events|relay|admin|bots|observability)/' },
      to: { path: '^packages/server/src/store/((sqlite|postgres|sql)/|open\\.ts$|memoryCounters\\.ts$)' },
    },
    {
      name: 'delivery-knows-no-http-or-store',
      comment: 'Delivery sends webhook requests; what to send and when is decided elsewhere.',
      severity: 'error',
      from: { path: '^packages/server/src/delivery/' },
      to: { path: '^packages/server/src/(http|handlers|store|events|relay)/' },
    },
    {
      name: 'logger-is-a-leaf',
      comment: 'Everything logs; the logger depends on nothing of the app.',
      severity: 'error',
      from: { path: '^packages/server/src/logger\\.ts$' },
      to: { path: '^packages/server/src/(http|handlers|store|events|relay|delivery|domain)/' },
    },
    {
      name: 'tests-do-not-import-bench',
      comment: 'Tests assert product behaviour; the benchmark harness is not part of it.',
      severity: 'error',
      from: { path: '^(packages/[^/]+/test|tests)/' },
      to: { path: '^bench/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: { path: '^packages/server/src/' },
      to: { circular: true },
    },
  ],
  options: {
    // node_modules are not followed, but kept in the graph: the driver rule sees imports of them.
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['source', 'import', 'default'] },
  },
};
