// `pnpm bench:instructions`: how many machine instructions the server executes per request, counted
// by valgrind's callgrind. A count, not a time: whatever else the machine is doing, the same checkout's
// requests cost the same instructions to within a per cent or two, where timed runs on this shared VM
// move by ±15-50%. V8's garbage collector and compilers run in bursts that a counted window catches
// or misses (a mark-compact moves the total by up to a fifth), so they are reported apart, and the
// requests' own part is the figure to compare. So a change worth 2-3% can be judged here, and
// `pnpm bench:ab` then says whether the
// instructions saved show up as time (they need not: cache misses, system calls and waiting for the
// disk are not instructions; the kernel's side of a system call is not counted at all).
//
//   pnpm bench:instructions [--a ../before] [--b .] [--op update|get] [--warmup 20000] [--requests 4000] [--top 30] [--keep]
//                           [--endpoints 1000] [--sample 1000]   (scenario 6's store: --endpoints 100000 --sample 5000)
//
// Each checkout's server runs as its `pnpm start` would, under `valgrind --tool=callgrind` (about 50
// times slower), with V8's `--single-threaded` (no compiler or GC threads whose share would depend on
// timing) and `--perf-basic-prof` (names for the JIT-compiled code). 50 connections send `--warmup`
// requests, the counters are zeroed (`callgrind_control -z`), `--requests` more are sent and the
// counters dumped. With --a, both servers run at once (callgrind is single-threaded; 2 cores). Prints
// instructions per request (the requests', the garbage collector's, the compilers', the total), B/A,
// and B's top functions by self instructions with A's beside them.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { type Part, partOf, selfCosts } from './lib/callgrind.ts';
import { freePort, installCleanup, keepTempDir, makeTempDir, removeTempDir, runNode, spawnTracked, stopChild, waitUntilServing } from './lib/procs.ts';
import { updateQuery } from './lib/record.ts';
import { PRODUCTION_SERVER_ENV, buildServer, serverCommandOf } from './lib/server.ts';
import type { SeedOutput } from './seed.ts';

const { values: opts } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: '.' },
    op: { type: 'string', default: 'update' },
    warmup: { type: 'string', default: '20000' },
    requests: { type: 'string', default: '4000' },
    top: { type: 'string', default: '30' },
    keep: { type: 'boolean', default: false },
    // The store: how many endpoints are seeded, and over how many of them the requests rotate.
    endpoints: { type: 'string', default: '1000' },
    sample: { type: 'string', default: '1000' },
  },
});
const op = opts.op as 'update' | 'get';
const [warmup, requests, top, endpointCount, sample] = [opts.warmup, opts.requests, opts.top, opts.endpoints, opts.sample].map(Number) as [
  number,
  number,
  number,
  number,
  number,
];
if (!['update', 'get'].includes(op) || !(warmup >= 0) || !(requests > 0) || !(endpointCount >= 1) || !(sample >= 1 && sample <= endpointCount)) {
  console.error('pnpm bench:instructions: --op is update or get; --warmup, --requests, --endpoints and --sample (at most --endpoints) are counts (see bench/instructions.ts)');
  process.exit(2);
}
for (const tool of ['valgrind', 'callgrind_control', 'callgrind_annotate']) {
  if (spawnSync(tool, ['--version'], { stdio: 'ignore' }).error) {
    console.error(`pnpm bench:instructions needs ${tool} (Debian: apt install valgrind)`);
    process.exit(2);
  }
}

/** Sends exactly `amount` requests over 50 connections; every answer must be 2xx. */
async function send(origin: string, amount: number, path: (n: number) => string, from: number): Promise<void> {
  let n = from;
  const result = await autocannon({
    url: origin,
    connections: 50,
    amount,
    timeout: 600, // seconds: under valgrind a request can wait behind 49 others for a long time
    requests: [{ method: op === 'get' ? 'GET' : 'POST', setupRequest: (req) => ({ ...req, path: path(n++) }) }],
  });
  if (result.errors + result.non2xx > 0) throw new Error(`${result.errors} errors and ${result.non2xx} non-2xx answers`);
}

interface Measured {
  perRequest: number;
  byFunction: Map<string, number>;
  byPart: Map<Part, number>;
}

async function measure(side: string, checkout: string, dir: string, seededFile: string, path: (n: number) => string): Promise<Measured> {
  const { flags, main } = serverCommandOf(checkout);
  const port = await freePort();
  const store = join(dir, `${side}.sqlite`);
  copyFileSync(seededFile, store);
  const out = join(dir, `${side}.callgrind`);
  // callgrind_control finds the process by a file named after USER and HOST: both get the same ones.
  const env = { ...process.env, ...PRODUCTION_SERVER_ENV, USER: 'bench', PORT: String(port), CHATBRIDGE_STORE: 'sqlite', CHATBRIDGE_SQLITE_PATH: store };
  const server = spawnTracked(
    `server ${side} under callgrind`,
    ['--tool=callgrind', `--callgrind-out-file=${out}`, process.execPath, '--single-threaded', '--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${out}.v8.log`, ...flags, main],
    env,
    checkout,
    { command: 'valgrind' },
  );
  const control = (command: '-z' | '-d') => {
    const r = spawnSync('callgrind_control', [command, String(server.pid)], { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`callgrind_control ${command} failed: ${r.stdout}${r.stderr}`);
  };
  try {
    await waitUntilServing(`http://127.0.0.1:${port}/-/live`, server, 300_000);
    const origin = `http://127.0.0.1:${port}`;
    console.log(`${side}: serving under callgrind; ${warmup.toLocaleString('en-US')} warm-up requests...`);
    await send(origin, warmup, path, 0);
    control('-z');
    await send(origin, requests, path, warmup);
    control('-d');
  } finally {
    await stopChild(server, 120_000);
  }
  // V8 writes the perf map to /tmp under the process's PID; it moves in with callgrind's files.
  const perfMap = join(dir, `${side}.perf.map`);
  if (existsSync(`/tmp/perf-${server.pid}.map`)) renameSync(`/tmp/perf-${server.pid}.map`, perfMap);
  const mapText = existsSync(perfMap) ? readFileSync(perfMap, 'utf8') : '';
  const annotated = spawnSync('callgrind_annotate', ['--threshold=100', `${out}.1`], { encoding: 'utf8', maxBuffer: 1 << 28 }).stdout;
  const { total, byFunction } = selfCosts(annotated, mapText, checkout);
  if (!Number.isFinite(total)) throw new Error(`${side}: no counts in ${out}.1`);
  const byPart = new Map<Part, number>();
  for (const [name, cost] of byFunction) {
    const part = partOf(name);
    byFunction.set(name, cost / requests);
    byPart.set(part, (byPart.get(part) ?? 0) + cost / requests);
  }
  // The functions' self costs add up to the program's total, but once in a while a dump after zeroing
  // does not (seen once: 21% more); such a window is not to be trusted.
  const summed = [...byPart.values()].reduce((a, b) => a + b, 0) * requests;
  if (Math.abs(summed / total - 1) > 0.02) {
    console.log(`${side}: WARNING: its functions' counts add up to ${((summed / total - 1) * 100).toFixed(1)}% off its total: run again`);
  }
  return { perRequest: total / requests, byFunction, byPart };
}

{
  installCleanup();
  const sides: [string, string][] = [...(opts.a ? [['A', resolve(opts.a)] as [string, string]] : []), ['B', resolve(opts.b!)]];
  const dir = makeTempDir('chatbridge-instructions-');
  try {
    for (const [, checkout] of sides) buildServer(checkout);
    const seedFile = join(dir, 'seed.json');
    const seededFile = join(dir, 'seeded.sqlite');
    const seeder = sides.at(-1)![1];
    const seeded = await runNode(
      'seeder',
      ['bench/seed.ts', '--count', String(endpointCount), '--sample', String(sample), '--prefix', 'ir-', '--out', seedFile],
      { ...process.env, CHATBRIDGE_STORE: 'sqlite', CHATBRIDGE_SQLITE_PATH: seededFile },
      seeder,
      600_000,
    );
    if (seeded.code !== 0) throw new Error(`seeding failed:\n${seeded.output}`);
    const endpoints = (JSON.parse(readFileSync(seedFile, 'utf8')) as SeedOutput).endpoints;
    // Requests spread over the endpoints in a fixed order; updates carry new values each time.
    const path = (n: number) => {
      const e = endpoints[(n * 7919) % endpoints.length]!;
      return op === 'get' ? `/${e.id}?token=${e.token}` : `/update/${e.id}?token=${e.token}&${updateQuery(n)}`;
    };
    const results = await Promise.all(sides.map(([side, checkout]) => measure(side, checkout, dir, seededFile, path)));
    const [first, last] = [results[0]!, results.at(-1)!];
    const fmt = (x: number) => Math.round(x).toLocaleString('en-US').padStart(10);
    console.log(
      `\ninstructions per ${op} request (${requests.toLocaleString('en-US')} counted after ${warmup.toLocaleString('en-US')} warm-up, 50 connections; ` +
        `${endpointCount.toLocaleString('en-US')} endpoints stored, requests over ${sample.toLocaleString('en-US')})`,
    );
    sides.forEach(([side, checkout]) => console.log(`  ${side}: ${checkout}`));
    console.log(`  ${''.padEnd(20)}${sides.map(([side]) => side.padStart(10)).join(' ')}${results.length === 2 ? '     B/A' : ''}`);
    const row = (label: string, of: (m: Measured) => number) =>
      console.log(`  ${label.padEnd(20)}${results.map((m) => fmt(of(m))).join(' ')}${results.length === 2 ? `  ${(of(last) / of(first)).toFixed(4)}` : ''}`);
    // Garbage collection and compilation come in bursts that a window catches or misses: compare the requests' own part.
    for (const part of ['the requests', 'garbage collection', 'compilation'] as const) row(part, (m) => m.byPart.get(part) ?? 0);
    row('total', (m) => m.perRequest);
    console.log(`\ntop ${top} functions of ${sides.at(-1)![0]} by self instructions per request${results.length === 2 ? ' (A beside)' : ''}`);
    for (const [name, cost] of [...last.byFunction].sort((x, y) => y[1] - x[1]).slice(0, top)) {
      const a = results.length === 2 ? fmt(first.byFunction.get(name) ?? 0) : '';
      console.log(`${fmt(cost)} ${(cost / last.perRequest * 100).toFixed(1).padStart(5)}% ${a}  ${name.slice(0, 140)}`);
    }
  } finally {
    if (opts.keep) {
      keepTempDir(dir);
      console.log(`\ncallgrind's files are in ${dir}`);
    } else removeTempDir(dir);
  }
}
