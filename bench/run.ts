// `pnpm bench`: chatbridge's HTTP benchmark. The server runs as its own process, started as
// `pnpm start` starts it (compiled, its node flags, production settings); autocannon loads it from a
// fresh child process per measurement (bench/load-child.ts), 50 connections.
//
//   pnpm bench                  full run (~3-5 min): 10 s per scenario after a 3 s warm-up, the
//                               baseline as long beside each scenario
//   pnpm bench --quick          under a minute: 3 s after 1 s, 10,000 endpoints in the large store,
//                               the baseline 1 s beside each scenario; figures are indicative only
//   pnpm bench --only=1,2       a subset (numbers or keys); the baseline runs beside them when 1 is in it
//   pnpm bench --cpu-prof=get-sqlite   those scenarios' servers run under --cpu-prof (bench/results/profiles)
//   options: --duration S --warmup S --baseline-duration S --connections N --large N
//
// Scenarios (SCENARIOS below, in run order):
//   1 baseline          bare node:http (bench/baseline-server.ts) answering with a real record's bytes
//   7 floor             Express + express-openapi-validator alone (bench/floor-server.ts), validating the
//                       requests of 2 and answering with the record's bytes: the stack's ceiling
//   2 get-sqlite        GET /{id}?token=..., 1,000 endpoints on SQLite, requests rotating over all of them
//   6 get-sqlite-large  as 2 with 100,000 endpoints stored; requests rotate over 5,000 of them
//   3 update-sqlite     POST /update/{id}, three overwrites that always change the record (checked after)
//   4 get-postgres      2 and 3 with CHATBRIDGE_STORE=postgres; skipped when DATABASE_URL is not set
//   5 update-postgres
//
// The machine's speed drifts within a run, so the baseline's server stays up (idle in between) and is
// measured right before every other scenario and once after the last: a scenario's ratio is over the
// mean of the two baseline runs beside it, and row 1 is the median of all its runs.
//
// Output: a table, the targets (informational), bench/results/<timestamp>.json, and for a full run of
// every scenario bench/results/latest.json and latest.svg. The exit code is 1 only when a scenario
// failed or a request errored or was answered non-2xx.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type LoadFigures, pathsOf } from './lib/load.ts';
import { LoadChild } from './lib/loadChild.ts';
import {
  cpuSecondsOf,
  freePort,
  installCleanup,
  isInterrupted,
  machineBusySeconds,
  makeTempDir,
  onInterrupt,
  peakRssMB,
  removeTempDir,
  runNode,
  type Spawned,
  spawnTracked,
  stopChild,
  waitUntilServing,
} from './lib/procs.ts';
import { UPDATED_CONTENT } from './lib/record.ts';
import { buildServer, median, PRODUCTION_SERVER_ENV, serverCommandOf } from './lib/server.ts';
import { barChart } from './lib/svg.ts';
import { checkTargets } from './lib/targets.ts';
import type { SeedOutput } from './seed.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const RESULTS = join(ROOT, 'bench/results');
const PROFILES = join(RESULTS, 'profiles');
const SERVER = serverCommandOf(ROOT);

type Store = 'small' | 'large' | 'postgres';

/** One scenario: which server answers, on which seeded store, under which requests. */
interface Scenario {
  n: number;
  key: string;
  title: string;
  server: 'baseline' | 'floor' | 'chatbridge';
  store: Store;
  op: 'get' | 'update';
  /** Connections (default --connections, 50) and a fixed total request rate (default: as fast as answered). */
  connections?: number;
  ratePerSec?: number;
}

// ---------------------------------------------------------------------------------------------
// Options

const usage = (message: string): never => {
  console.error(`pnpm bench: ${message} (see pnpm bench --help)`);
  process.exit(2);
};
const { values: argv } = (() => {
  try {
    return parseArgs({
      options: {
        quick: { type: 'boolean', default: false },
        only: { type: 'string' },
        'cpu-prof': { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        'baseline-duration': { type: 'string' },
        connections: { type: 'string' },
        large: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    return usage(err instanceof Error ? err.message : String(err));
  }
})();
if (argv.help) {
  console.log(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\nimport ')[0]!.replace(/^\/\/ ?/gm, ''));
  process.exit(0);
}
const mode = argv.quick ? 'quick' : 'full';
const num = (v: string | undefined, fallback: number, what: string, zero = false) => {
  const n = v === undefined ? fallback : Number(v);
  if (!Number.isFinite(n) || n < 0 || (n === 0 && !zero)) usage(`--${what} must be a positive number${zero ? ' or 0' : ''}`);
  return n;
};
const settings = {
  mode,
  connections: num(argv.connections, 50, 'connections'),
  durationS: num(argv.duration, argv.quick ? 3 : 10, 'duration'),
  warmupS: num(argv.warmup, argv.quick ? 1 : 3, 'warmup', true),
  /** A quick run measures the baseline for 1 s without a warm-up (but the first run's, on a cold process). */
  baselineDurationS: num(argv['baseline-duration'], argv.quick ? 1 : num(argv.duration, 10, 'duration'), 'baseline-duration'),
  baselineWarmupS: argv.quick ? 0 : num(argv.warmup, 3, 'warmup', true),
  smallEndpoints: 1_000,
  largeEndpoints: num(argv.large, argv.quick ? 10_000 : 100_000, 'large'),
  largeSampled: argv.quick ? 2_000 : 5_000,
};

const SCENARIOS: Scenario[] = [
  { n: 1, key: 'baseline', title: 'baseline: bare node:http', server: 'baseline', store: 'small', op: 'get' },
  { n: 7, key: 'floor', title: 'floor: Express + validator, same bytes', server: 'floor', store: 'small', op: 'get' },
  { n: 2, key: 'get-sqlite', title: 'getEndpoint, SQLite', server: 'chatbridge', store: 'small', op: 'get' },
  {
    n: 6,
    key: 'get-sqlite-large',
    title: `getEndpoint, SQLite, ${settings.largeEndpoints.toLocaleString('en-US')} endpoints`,
    server: 'chatbridge',
    store: 'large',
    op: 'get',
  },
  { n: 3, key: 'update-sqlite', title: 'updateEndpoint, SQLite', server: 'chatbridge', store: 'small', op: 'update' },
  { n: 4, key: 'get-postgres', title: 'getEndpoint, PostgreSQL', server: 'chatbridge', store: 'postgres', op: 'get' },
  { n: 5, key: 'update-postgres', title: 'updateEndpoint, PostgreSQL', server: 'chatbridge', store: 'postgres', op: 'update' },
];
const BASELINE = SCENARIOS[0]!;

function pick(list: string | undefined): Set<string> | undefined {
  if (list === undefined) return undefined;
  return new Set(
    list.split(',').filter(Boolean).map((item) => {
      const s = SCENARIOS.find((d) => String(d.n) === item.trim() || d.key === item.trim());
      return s ? s.key : usage(`unknown scenario "${item}"; use 1-7 or ${SCENARIOS.map((d) => d.key).join(', ')}`);
    }),
  );
}
const profiled = pick(argv['cpu-prof']) ?? new Set<string>();
const selected = pick(argv.only) ?? new Set(profiled.size > 0 ? profiled : SCENARIOS.map((s) => s.key));
for (const key of profiled) selected.add(key);
const chosen = SCENARIOS.filter((s) => selected.has(s.key));
const complete = chosen.length === SCENARIOS.length && profiled.size === 0;

// ---------------------------------------------------------------------------------------------
// Processes

const stamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
const log = (line: string) => console.log(line);
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');

/** A child's environment: ours without any chatbridge setting, plus `extra`. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CHATBRIDGE_') && k !== 'DATABASE_URL') env[k] = v;
  return { ...env, ...extra };
}

interface Dataset {
  storeEnv: Record<string, string>;
  seed: SeedOutput;
}

async function seed(name: string, storeEnv: Record<string, string>, args: string[], dir: string): Promise<Dataset> {
  const out = join(dir, `${name}.seed.json`);
  const r = await runNode(`seeder (${name})`, ['bench/seed.ts', ...args, '--out', out], childEnv({ ...storeEnv, LOG_LEVEL: 'warn' }), ROOT, 10 * 60_000);
  if (r.code !== 0) throw new Error(`seeding ${name} failed:\n${r.output.trim()}`);
  log(`  ${r.output.trim()}`);
  return { storeEnv, seed: JSON.parse(readFileSync(out, 'utf8')) as SeedOutput };
}

interface Target {
  proc: Spawned;
  origin: string;
  profile?: string;
}

async function startTarget(s: Scenario, data: Dataset, recordFile: string): Promise<Target> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const profile = profiled.has(s.key) ? `${s.key}-${stamp}.cpuprofile` : undefined;
  if (profile) mkdirSync(PROFILES, { recursive: true });
  const profFlags = profile ? ['--cpu-prof', '--cpu-prof-dir', PROFILES, '--cpu-prof-name', profile] : [];
  const proc =
    s.server === 'chatbridge'
      ? spawnTracked('chatbridge server', [...SERVER.flags, ...profFlags, SERVER.main], childEnv({ ...PRODUCTION_SERVER_ENV, PORT: String(port), ...data.storeEnv }), ROOT)
      : spawnTracked(
          `${s.server} server`,
          [...(s.server === 'floor' ? SERVER.flags : []), ...profFlags, `bench/${s.server}-server.ts`, recordFile],
          childEnv({ PORT: String(port), HOST: '127.0.0.1' }),
          ROOT,
        );
  try {
    await waitUntilServing(`${origin}${s.server === 'baseline' ? '/' : '/-/ready'}`, proc, 30_000);
  } catch (err) {
    await stopChild(proc, 2_000);
    throw err;
  }
  return { proc, origin, ...(profile && { profile: relative(ROOT, join(PROFILES, profile)) }) };
}

// ---------------------------------------------------------------------------------------------
// Measuring

interface Result {
  n: number;
  key: string;
  title: string;
  status: 'ok' | 'skipped' | 'failed';
  reason?: string;
  figures?: LoadFigures;
  /** Errors and non-2xx answers during the warm-up. */
  warmupProblems?: number;
  peakRssMB?: number;
  /** Server CPU time per answered request, µs: much steadier than req/s on a shared machine. */
  cpuUsPerRequest?: number;
  /** CPU of every process but the server and the load generator, % of one core: the noise. */
  otherCpuPct?: number;
  ratio?: number;
  /** The baseline req/s the ratio is over. */
  baselineRps?: number;
  profile?: string;
  notes: string[];
}

/** The next update's number, for pre-checks and load children alike: no update repeats another. */
const updateSeq = { next: 1 };

/** A warm-up, then the measured window, from a fresh load generator. */
async function measure(s: Scenario, t: Target, endpoints: SeedOutput['endpoints'], warmupS: number, durationS: number): Promise<Partial<Result>> {
  const plan = { origin: t.origin, op: s.op, endpoints, connections: s.connections ?? settings.connections, seqFrom: updateSeq.next, ...(s.ratePerSec && { ratePerSec: s.ratePerSec }) };
  const generator = await LoadChild.start(plan, ROOT, childEnv());
  try {
    const runFor = async (seconds: number) => {
      const run = await generator.run(seconds);
      updateSeq.next = run.nextSeq;
      return run;
    };
    const warm = warmupS > 0 ? (await runFor(warmupS)).figures : undefined;
    const cpu0 = cpuSecondsOf(t.proc.pid);
    const busy0 = machineBusySeconds();
    const wall0 = performance.now();
    const { figures, cpuS: loadCpuS } = await runFor(durationS);
    const wallS = (performance.now() - wall0) / 1000;
    const cpu1 = cpuSecondsOf(t.proc.pid);
    const busy1 = machineBusySeconds();
    const serverCpuS = cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : undefined;
    const rss = peakRssMB(t.proc.pid);
    return {
      figures,
      warmupProblems: warm ? warm.errors + warm.non2xx : 0,
      ...(rss !== undefined && { peakRssMB: rss }),
      ...(serverCpuS !== undefined && figures.requests > 0 && { cpuUsPerRequest: (serverCpuS * 1e6) / figures.requests }),
      ...(serverCpuS !== undefined && busy0 !== undefined && busy1 !== undefined && { otherCpuPct: Math.max(0, ((busy1 - busy0 - serverCpuS - loadCpuS) / wallS) * 100) }),
    };
  } finally {
    await generator.stop();
  }
}

/** One request before the load: the right status and body, so that a misconfiguration fails fast. */
async function precheck(s: Scenario, origin: string, endpoints: SeedOutput['endpoints'], recordJson: string, notes: string[]): Promise<void> {
  const res = await fetch(origin + pathsOf(s.op, endpoints, updateSeq)(endpoints.length - 1), { method: s.op === 'get' ? 'GET' : 'POST', signal: AbortSignal.timeout(10_000) });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`pre-check answered ${res.status}: ${body.slice(0, 500)}`);
  if (s.op === 'get' && body !== recordJson) notes.push(`response body (${body.length} B) differs from the baseline's (${recordJson.length} B)`);
  if (s.op === 'update' && !UPDATED_CONTENT.test((JSON.parse(body) as { meta: { message: { content: string } } }).meta.message.content)) {
    throw new Error('pre-check update did not change meta.message.content');
  }
}

/** After the update load: every update wrote all three of its fields, visible on a fresh read. */
async function verifyWrites(origin: string, endpoints: SeedOutput['endpoints']): Promise<string | undefined> {
  for (const e of endpoints.slice(0, 20)) {
    const res = await fetch(`${origin}/${e.id}?token=${e.token}`, { signal: AbortSignal.timeout(10_000) });
    const rec = (await res.json()) as { config: { logs: { chat_b: string | null } }; meta: { message: { content: string; author: { name: string } } } };
    const seq = UPDATED_CONTENT.test(rec.meta.message.content) ? /^bench update (\d+)/.exec(rec.meta.message.content)![1] : undefined;
    if (!seq || rec.config.logs.chat_b !== `log-b-${seq}` || rec.meta.message.author.name !== `Bench author ${seq}`) {
      return `endpoint ${e.id} does not show a complete committed update: ${JSON.stringify(rec.meta.message).slice(0, 200)}`;
    }
  }
  return undefined;
}

async function stopTarget(t: Target, result: Result): Promise<void> {
  const end = await stopChild(t.proc, 20_000);
  if (end.killed || (end.code !== 0 && end.signal === null)) result.notes.push(`server did not stop cleanly (${end.killed ? 'killed after 20 s' : `code ${end.code}`})`);
  const printed = t.proc.output().trim();
  if (printed) result.notes.push(`server printed at LOG_LEVEL=warn:\n    ${printed.split('\n').slice(-5).join('\n    ')}`);
  if (t.profile) result.profile = t.profile;
}

const resultOf = (s: Scenario, title = s.title): Result => ({ n: s.n, key: s.key, title, status: 'ok', notes: [] });

async function runScenario(s: Scenario, data: Dataset, recordFile: string): Promise<Result> {
  const result = resultOf(s);
  const { endpoints, recordJson } = data.seed;
  let t: Target | undefined;
  try {
    t = await startTarget(s, data, recordFile);
    await precheck(s, t.origin, endpoints, recordJson, result.notes);
    Object.assign(result, await measure(s, t, endpoints, settings.warmupS, settings.durationS));
    const problem = s.op === 'update' ? await verifyWrites(t.origin, endpoints) : undefined;
    if (problem) Object.assign(result, { status: 'failed', reason: `writes not verified: ${problem}` });
  } catch (err) {
    Object.assign(result, { status: 'failed', reason: err instanceof Error ? err.message : String(err) });
  } finally {
    if (t) await stopTarget(t, result);
  }
  return result;
}

/** The baseline's runs: its server starts at the first and stays up, idle in between, until finish(). */
class Baseline {
  readonly runs: { before?: string; result: Result }[] = [];
  private target: Promise<Target> | undefined;
  private readonly data: Dataset;
  private readonly recordFile: string;

  constructor(data: Dataset, recordFile: string) {
    this.data = data;
    this.recordFile = recordFile;
  }

  /** Measures the baseline now; `before` is the scenario measured next (none after the last). */
  async run(before: string | undefined): Promise<void> {
    const first = this.runs.length === 0;
    const result = resultOf(BASELINE);
    this.runs.push({ ...(before && { before }), result });
    log(`Running 1 baseline${before ? ` before ${before}` : ', after the last scenario'}...`);
    try {
      this.target ??= startTarget(BASELINE, this.data, this.recordFile);
      const t = await this.target;
      const warmupS = first ? Math.max(settings.warmupS, settings.baselineWarmupS) : settings.baselineWarmupS;
      Object.assign(result, await measure(BASELINE, t, this.data.seed.endpoints, warmupS, settings.baselineDurationS));
    } catch (err) {
      Object.assign(result, { status: 'failed', reason: err instanceof Error ? err.message : String(err) });
    }
  }

  /** Stops the server and sums the runs up as scenario 1: medians of req/s, latencies and CPU; totals of errors. */
  async finish(): Promise<Result> {
    const result = resultOf(BASELINE, `${BASELINE.title}, median of ${this.runs.length}`);
    const t = await this.target?.catch(() => undefined);
    if (t) await stopTarget(t, result);
    const done = this.runs.map((r) => r.result).filter((r) => r.figures);
    const failure = this.runs.find((r) => r.result.status === 'failed')?.result.reason;
    if (failure !== undefined) Object.assign(result, { status: 'failed', reason: failure });
    if (done.length === 0) return { ...result, status: 'failed', reason: failure ?? 'the baseline did not run' };
    const med = (pick: (r: Result) => number | undefined) => {
      const values = done.map(pick).filter((v): v is number => v !== undefined);
      return values.length ? median(values) : undefined;
    };
    const sum = (pick: (f: LoadFigures) => number) => done.reduce((a, r) => a + pick(r.figures!), 0);
    result.figures = {
      requestsPerSec: med((r) => r.figures!.requestsPerSec)!,
      requests: sum((f) => f.requests),
      p50Ms: med((r) => r.figures!.p50Ms)!,
      p99Ms: med((r) => r.figures!.p99Ms)!,
      maxMs: Math.max(...done.map((r) => r.figures!.maxMs)),
      errors: sum((f) => f.errors),
      non2xx: sum((f) => f.non2xx),
      statusCodes: done.reduce<Record<string, number>>((all, r) => {
        for (const [code, n] of Object.entries(r.figures!.statusCodes)) all[code] = (all[code] ?? 0) + n;
        return all;
      }, {}),
      errorSamples: [...new Set(done.flatMap((r) => r.figures!.errorSamples))].slice(0, 5),
    };
    result.warmupProblems = done.reduce((a, r) => a + (r.warmupProblems ?? 0), 0);
    const rss = Math.max(...done.map((r) => r.peakRssMB ?? NaN));
    if (Number.isFinite(rss)) result.peakRssMB = rss;
    const cpu = med((r) => r.cpuUsPerRequest);
    if (cpu !== undefined) result.cpuUsPerRequest = cpu;
    const other = med((r) => r.otherCpuPct);
    if (other !== undefined) result.otherCpuPct = other;
    return result;
  }
}

// ---------------------------------------------------------------------------------------------
// Main

async function preparePostgres(dir: string): Promise<{ data?: Dataset; reason?: string; cleanup: () => Promise<void> }> {
  const none = async () => {};
  if (!process.env.DATABASE_URL) return { reason: 'DATABASE_URL is not set', cleanup: none };
  const storeEnv: Record<string, string> = { CHATBRIDGE_STORE: 'postgres' };
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && (k === 'DATABASE_URL' || k.startsWith('CHATBRIDGE_POSTGRES_') || k.startsWith('CHATBRIDGE_PG_'))) storeEnv[k] = v;
  // A shared database: this run's endpoints carry a prefix of their own and are deleted afterwards.
  const prefix = `bench-${Date.now().toString(36)}${process.pid.toString(36)}-`;
  const removeRows = async () => {
    const r = await runNode('seeder (clean-up)', ['bench/seed.ts', '--delete-prefix', prefix], childEnv(storeEnv), ROOT, 5 * 60_000);
    if (r.code !== 0) console.error(`  could not delete the PostgreSQL rows with prefix ${prefix}:\n${r.output}`);
  };
  const unregister = onInterrupt(removeRows);
  const cleanup = async () => {
    unregister();
    await removeRows();
  };
  try {
    const n = String(settings.smallEndpoints);
    return { data: await seed('postgres', storeEnv, ['--count', n, '--sample', n, '--prefix', prefix], dir), cleanup };
  } catch (err) {
    return { reason: `failed: ${err instanceof Error ? err.message : String(err)}`, cleanup };
  }
}

async function main(): Promise<number> {
  installCleanup();
  const startedAt = new Date();
  const load0 = os.loadavg();
  log(
    `chatbridge bench (${mode}): ${settings.connections} connections, ${settings.durationS} s per scenario after ${settings.warmupS} s warm-up; ` +
      `Node ${process.version}, ${os.cpus().length} CPUs, load average ${load0.map((l) => l.toFixed(2)).join(' ')}`,
  );
  const dir = makeTempDir('chatbridge-bench-');
  const results: Result[] = [];
  let baseline: Baseline | undefined;
  let pgCleanup = async () => {};
  try {
    buildServer(ROOT);
    log('Seeding...');
    const n = String(settings.smallEndpoints);
    const data: Partial<Record<Store, Dataset>> = {};
    const sqlite = (name: string) => ({ CHATBRIDGE_STORE: 'sqlite', CHATBRIDGE_SQLITE_PATH: join(dir, `${name}.sqlite`) });
    data.small = await seed('small', sqlite('small'), ['--count', n, '--sample', n], dir);
    const recordFile = join(dir, 'record.json');
    writeFileSync(recordFile, data.small.seed.recordJson);
    if (chosen.some((s) => s.store === 'large')) {
      data.large = await seed('large', sqlite('large'), ['--count', String(settings.largeEndpoints), '--sample', String(settings.largeSampled), '--bulk'], dir);
    }
    if (chosen.some((s) => s.store === 'postgres')) {
      const pg = await preparePostgres(dir);
      pgCleanup = pg.cleanup;
      if (pg.data) data.postgres = pg.data;
      for (const s of chosen.filter((d) => d.store === 'postgres' && !pg.data)) {
        results.push({ ...resultOf(s), status: pg.reason?.startsWith('failed') ? 'failed' : 'skipped', reason: `postgres store: ${pg.reason}` });
      }
    }
    if (selected.has(BASELINE.key)) baseline = new Baseline(data.small, recordFile);
    for (const s of chosen) {
      const dataset = data[s.store];
      if (s === BASELINE || !dataset || isInterrupted()) continue;
      await baseline?.run(s.key);
      log(`Running ${s.n} ${s.title}...`);
      results.push(await runScenario(s, dataset, recordFile));
    }
    if (!isInterrupted()) await baseline?.run(undefined);
  } finally {
    if (baseline) results.push(await baseline.finish());
    await pgCleanup();
    removeTempDir(dir);
  }
  if (isInterrupted()) return 130;

  // Each scenario's ratio: over the mean of the baseline runs right before and right after it.
  const runs = baseline?.runs ?? [];
  const rps = (i: number) => runs[i]?.result.figures?.requestsPerSec;
  const overall = results.find((r) => r.key === BASELINE.key)?.figures?.requestsPerSec;
  for (const r of results) {
    if (!r.figures || overall === undefined) continue;
    const at = runs.findIndex((b) => b.before === r.key);
    const beside = [rps(at), rps(at + 1)].filter((v): v is number => at !== -1 && v !== undefined);
    r.baselineRps = r.key === BASELINE.key || beside.length === 0 ? overall : beside.reduce((a, b) => a + b, 0) / beside.length;
    r.ratio = r.figures.requestsPerSec / r.baselineRps;
    if (beside.length === 2 && Math.abs(beside[1]! - beside[0]!) / beside[0]! > 0.15) {
      r.notes.push(`the baseline moved ${(((beside[1]! - beside[0]!) / beside[0]!) * 100).toFixed(0)}% across it: the machine was noisy, its ratio is unreliable`);
    }
  }
  results.sort((a, b) => a.n - b.n);
  const targets = checkTargets(results);

  log('');
  const head =
    ` #  ${'scenario'.padEnd(42)} ${'req/s'.padStart(8)} ${'x base'.padStart(6)} ${'base r/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ` +
    `${'errors'.padStart(6)} ${'non-2xx'.padStart(7)} ${'peak RSS'.padStart(9)} ${'us/req'.padStart(6)} ${'other'.padStart(6)}`;
  log(`${head}\n${'-'.repeat(head.length)}`);
  const opt = (v: number | undefined, f: (v: number) => string) => (v === undefined ? '-' : f(v));
  for (const r of results) {
    const label = `${String(r.n).padStart(2)}  ${`${r.title}${r.profile ? ' (profiled)' : ''}`.padEnd(42)}`;
    const f = r.figures;
    if (!f) {
      log(`${label} ${r.status}: ${r.reason ?? ''}`);
      continue;
    }
    log(
      `${label} ${fmtInt(f.requestsPerSec).padStart(8)} ${opt(r.ratio, (v) => v.toFixed(2)).padStart(6)} ${opt(r.baselineRps, fmtInt).padStart(8)} ` +
        `${f.p50Ms.toFixed(2).padStart(7)} ${f.p99Ms.toFixed(2).padStart(7)} ${String(f.errors).padStart(6)} ${String(f.non2xx).padStart(7)} ` +
        `${opt(r.peakRssMB, (v) => `${v.toFixed(0)} MB`).padStart(9)} ${opt(r.cpuUsPerRequest, (v) => v.toFixed(0)).padStart(6)} ${opt(r.otherCpuPct, (v) => `${v.toFixed(0)}%`).padStart(6)}`,
    );
  }
  log(
    '    x base: req/s over the mean of the baseline runs right before and after the scenario (base r/s); row 1: the median of its runs.\n' +
      '    us/req: server CPU per request. other: CPU of every other process on the machine, % of one core (noise).',
  );
  if (runs.length > 0) log(`  baseline runs, req/s: ${runs.map((b) => (b.result.figures ? fmtInt(b.result.figures.requestsPerSec) : b.result.status)).join(' ')}`);
  let bad = false;
  for (const r of results) {
    for (const note of r.notes) log(`  note ${r.n}: ${note}`);
    const problems = (r.figures ? r.figures.errors + r.figures.non2xx : 0) + (r.warmupProblems ?? 0);
    if (r.status === 'failed' || problems > 0) {
      bad = true;
      log(`\n!!! scenario ${r.n} (${r.key}) ${r.status === 'failed' ? `FAILED: ${r.reason}` : ''}`);
      if (problems > 0) log(`    ${problems} errors or non-2xx answers; status codes ${JSON.stringify(r.figures?.statusCodes)}; ${r.figures?.errorSamples.join('; ')}`);
    }
  }
  if (profiled.size > 0) log('\nTargets not checked: servers ran under --cpu-prof. Open the profiles in Chrome DevTools.');
  else {
    log(`\nTargets (informational${mode === 'quick' ? '; a quick run is indicative only' : ''}):`);
    for (const c of targets) log(`  ${c.status.padEnd(4)}  ${c.description.padEnd(46)} ${c.target.padEnd(17)} ${c.actual}`);
  }

  const git = (...args: string[]) => {
    try {
      return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return undefined;
    }
  };
  const report = {
    schema: 2,
    mode,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    commit: git('rev-parse', 'HEAD'),
    dirty: (git('status', '--porcelain', '--', 'packages', 'openapi') ?? '') !== '',
    machine: { node: process.version, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, loadAverageBefore: load0, loadAverageAfter: os.loadavg() },
    settings: { ...settings, scenarios: chosen.map((s) => s.key), profiled: [...profiled] },
    ok: !bad,
    baselineRuns: runs.map((b) => ({ before: b.before, requestsPerSec: b.result.figures?.requestsPerSec ?? null })),
    scenarios: results,
    targets,
  };
  mkdirSync(RESULTS, { recursive: true });
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const file = join(RESULTS, `${stamp}${profiled.size ? '-profile' : mode === 'quick' ? '-quick' : complete ? '' : '-partial'}.json`);
  writeFileSync(file, json);
  const written = [relative(ROOT, file)];
  if (profiled.size === 0 && (complete || mode === 'quick')) {
    const latest = mode === 'quick' ? 'latest-quick' : 'latest';
    const svg = barChart(
      `chatbridge: requests/s per scenario (${mode} run)`,
      `${settings.connections} connections, ${settings.durationS} s after ${settings.warmupS} s warm-up · Node ${process.version} · ${os.cpus().length} CPUs · ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
      'Bars: requests/s, higher is better. ×: ratio to the baseline measured right before and after each scenario (the req/s after "of").',
      results.map((r) => ({
        label: `${r.n} ${r.title}`,
        ...(r.figures && { value: r.figures.requestsPerSec }),
        ...(r.figures && r.ratio !== undefined && { note: `${r.ratio.toFixed(2)}× of ${fmtInt(r.baselineRps!)} · p99 ${r.figures.p99Ms.toFixed(1)} ms${opt(r.cpuUsPerRequest, (v) => ` · ${v.toFixed(0)} µs CPU/req`).replace(/^-$/, '')}` }),
        ...(!r.figures && { missing: `${r.status}: ${r.reason ?? ''}`.slice(0, 90) }),
        warn: r.status === 'failed' || (r.figures !== undefined && r.figures.errors + r.figures.non2xx > 0),
      })),
    );
    writeFileSync(join(RESULTS, `${latest}.json`), json);
    writeFileSync(join(RESULTS, `${latest}.svg`), svg);
    written.push(`bench/results/${latest}.json`, `bench/results/${latest}.svg`);
  }
  log(`\nWrote ${written.join(', ')}`);
  log(`finished in ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s${bad ? ': FAILED SCENARIOS, ERRORS OR NON-2XX ANSWERS, see above' : ''}`);
  return bad ? 1 : 0;
}

main().then(
  (code) => {
    if (!isInterrupted()) process.exit(code);
  },
  (err: unknown) => {
    if (isInterrupted()) return; // the signal handler is cleaning up and exits
    console.error('\nbench failed:', err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
