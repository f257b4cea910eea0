// Layer rules, checked by `pnpm lint:layers` (part of `pnpm test`). The server's rooms point inward:
// domain/ (the rules) knows nothing of how requests arrive, where records are kept or how messages
// leave; the store knows nothing of HTTP; tests exercise the product, never the benchmark harness.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'domain/ holds the rules as pure functions: it imports no adapter or transport.',
      severity: 'error',
      from: { path: '^packages/server/src/domain/' },
      to: {
        path: '^packages/server/src/(http|store|delivery|events|relay|handlers|observability|admin|portability)/|^packages/server/src/(logger|config|service|server|main|cli)\\.ts$',
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
      name: 'only-store-imports-a-database-driver',
      comment: "The database drivers (pg, node:sqlite) are the store adapters' own: every other room reaches data through the ports.",
      severity: 'error',
      from: { path: '^packages/server/src/', pathNot: '^packages/server/src/store/' },
      to: { path: '^node:sqlite$|node_modules/pg/' },
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
