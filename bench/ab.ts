// `pnpm bench:ab`: is checkout B faster than checkout A? On this shared VM one run of the benchmark
// moves by 15-25% and the machine switches between a fast and a slow mode, more than most single
// changes are worth. This runs the two servers in alternating rounds (A B, then B A, ...) against the
// same copy of a seeded SQLite store, the server pinned to CPU 1 and the load (autocannon, in this
// process) to CPU 0, and compares them round by round: the median of B/A per round, with every
// round's ratio shown, is what to quote. CPU per request (the server's, from /proc) is the steadier
// figure; req/s follows it.
//
//   pnpm bench:ab --a ../chatbridge-before [--b .] [--rounds 8] [--seconds 3] [--scenarios get,update]
//   pnpm bench:ab --a . --b-env CHATBRIDGE_RATE_LIMIT_PER_ENDPOINT=0      (one checkout, two settings)
//   DATABASE_URL=postgres://… pnpm bench:ab --a ../before --store postgres    (both on PostgreSQL)
//
// A and B are checkouts with their dependencies installed (`git worktree add ../before HEAD~1` then
// `pnpm install` there); --a-env and --b-env add settings (K=V,K=V) to one side's server. The store
// is seeded once, by B's seeder; on SQLite each server starts on a fresh copy of it, on PostgreSQL
// both use the same rows (IDs under a prefix of this run's, deleted at the end; PostgreSQL's own
// processes are not pinned).
import { copyFileSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { pathsOf, runLoad } from './lib/load.ts';
import { cpuSecondsOf, freePort, makeTempDir, removeTempDir, runNode, spawnTracked, stopChild, waitUntilServing } from './lib/procs.ts';
import { deleteSeededRows } from './lib/seededRows.ts';
import { vacuumAndReport } from './lib/vacuum.ts';
import { PRODUCTION_SERVER_ENV, buildServer, median, serverCommandOf } from './lib/server.ts';
import type { SeedOutput } from './seed.ts';

const { values: opts } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: '.' },
    rounds: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '3' },
    scenarios: { type: 'string', default: 'get,update' },
    'a-env': { type: 'string', default: '' },
    'b-env': { type: 'string', default: '' },
    store: { type: 'string', default: 'sqlite' },
  },
});
const onPostgres = opts.store === 'postgres';
if (!['sqlite', 'postgres'].includes(opts.store!) || (onPostgres && !process.env.DATABASE_URL)) {
  console.error('pnpm bench:ab: --store is sqlite or postgres, and postgres needs DATABASE_URL');
  process.exit(2);
}
if (!opts.a) {
  console.error('pnpm bench:ab: --a <checkout> is required (see the header of bench/ab.ts)');
  process.exit(2);
}
const checkouts = { A: resolve(opts.a), B: resolve(opts.b!) };
const settingsOf = (list: string) => Object.fromEntries(list.split(',').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const extraEnv = { A: settingsOf(opts['a-env']!), B: settingsOf(opts['b-env']!) };
/** Each side runs as its own checkout's `pnpm start` would. */
const commands = { A: serverCommandOf(checkouts.A), B: serverCommandOf(checkouts.B) };
const rounds = Number(opts.rounds);
const seconds = Number(opts.seconds);
const scenarios = opts.scenarios!.split(',') as ('get' | 'update')[];

/** Pins every thread of a process to one CPU (threads it starts later inherit it). */
const pin = (pid: number, cpu: number) => spawnSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });

pin(process.pid, 0);
const dir = makeTempDir('chatbridge-ab-');
const prefix = `ab-${process.pid}-`;
const storeFile = join(dir, 'seeded.sqlite');
const storeEnv = onPostgres ? { CHATBRIDGE_STORE: 'postgres' } : { CHATBRIDGE_STORE: 'sqlite', CHATBRIDGE_SQLITE_PATH: storeFile };
/** A server's store: on SQLite a fresh copy of the seeded file, on PostgreSQL the seeded rows. */
const storeEnvOf = (round: number, side: 'A' | 'B') => {
  if (onPostgres) return storeEnv;
  const file = join(dir, `run-${round}-${side}.sqlite`);
  copyFileSync(storeFile, file);
  return { CHATBRIDGE_SQLITE_PATH: file };
};
try {
  for (const side of ['A', 'B'] as const) buildServer(checkouts[side]);
  const seedFile = join(dir, 'seed.json');
  const seeded = await runNode(
    'seeder',
    ['bench/seed.ts', '--count', '1000', '--sample', '1000', '--prefix', prefix, '--out', seedFile],
    { ...process.env, ...storeEnv },
    checkouts.B,
    120_000,
  );
  if (seeded.code !== 0) throw new Error(`seeding failed:\n${seeded.output}`);
  const endpoints = (JSON.parse(readFileSync(seedFile, 'utf8')) as SeedOutput).endpoints;
  if (onPostgres) console.log(await vacuumAndReport(process.env.DATABASE_URL!, checkouts.B, 'before the rounds'));
  // One numbering for every round and side, as in pnpm bench: no update repeats another's values.
  const updateSeq = { next: 1 };
  const pathOf = (scenario: 'get' | 'update') => pathsOf(scenario, endpoints, updateSeq);

  /** figures[scenario][side][round] = [req/s, µs CPU per request, p99 ms] */
  const figures: Record<string, Record<'A' | 'B', [number, number, number][]>> = {};
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      const port = await freePort();
      const env = { ...process.env, ...PRODUCTION_SERVER_ENV, PORT: String(port), ...storeEnvOf(round, side), ...extraEnv[side] };
      const server = spawnTracked(`server ${side}`, [...commands[side].flags, commands[side].main], env, checkouts[side]);
      pin(server.pid, 1);
      try {
        await waitUntilServing(`http://127.0.0.1:${port}/-/live`, server, 30_000);
        for (const scenario of scenarios) {
          const spec = { origin: `http://127.0.0.1:${port}`, method: scenario === 'get' ? ('GET' as const) : ('POST' as const), path: pathOf(scenario), connections: 50 };
          await runLoad({ ...spec, durationS: 1 }); // warm-up
          const cpu0 = cpuSecondsOf(server.pid)!;
          const load = await runLoad({ ...spec, durationS: seconds });
          const cpuUs = ((cpuSecondsOf(server.pid)! - cpu0) * 1e6) / load.requests;
          if (load.errors + load.non2xx > 0) throw new Error(`${side} ${scenario}: ${load.errors} errors, ${load.non2xx} non-2xx`);
          ((figures[scenario] ??= { A: [], B: [] })[side][round] = [load.requestsPerSec, cpuUs, load.p99Ms]);
          console.log(`round ${round + 1} ${side} ${scenario.padEnd(6)} ${Math.round(load.requestsPerSec).toLocaleString('en-US').padStart(7)} req/s ${cpuUs.toFixed(0).padStart(4)} µs CPU/req  p99 ${load.p99Ms.toFixed(1)} ms`);
        }
      } finally {
        await stopChild(server);
      }
    }
  }
  console.log(`\nB/A per round (A: ${checkouts.A}, B: ${checkouts.B}); below 1 for CPU and above 1 for req/s: B is faster`);
  for (const scenario of scenarios) {
    const { A, B } = figures[scenario]!;
    const cpu = A.map((a, i) => B[i]![1] / a[1]);
    const rps = A.map((a, i) => B[i]![0] / a[0]);
    const p99 = A.map((a, i) => B[i]![2] / a[2]);
    const list = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
    console.log(`${scenario.padEnd(6)} CPU/req ${median(cpu).toFixed(3)} [${list(cpu)}]   req/s ${median(rps).toFixed(3)} [${list(rps)}]   p99 ${median(p99).toFixed(3)} [${list(p99)}]`);
  }
} finally {
  if (onPostgres) {
    await deleteSeededRows(prefix, { ...process.env, ...storeEnv }, checkouts.B);
    console.log(await vacuumAndReport(process.env.DATABASE_URL!, checkouts.B, 'after deleting the rounds\' rows'));
  }
  removeTempDir(dir);
}
