// `pnpm bench`: chatbridge's HTTP benchmark (scenarios, options and output: bench/README.md). Each server
// runs as its own process, started as `pnpm start` starts it; autocannon loads it from a fresh child
// process per measurement (bench/load-child.ts). Latency scenarios: lib/latency.ts.
//
// The machine's speed drifts within a run, so the baseline's server stays up (idle in between) and is
// measured right before every other request scenario and once after the last: a scenario's ratio is over
// the mean of the two baseline runs beside it, and row 1 is the median of all its runs.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { type DeliveryFigures, type DeliveryResult, type DeliverySpec, runDelivery } from './lib/delivery.ts';
import { type Harness, LATENCY_SERVER_ENV, type LatencyFigures, type LatencySpec, latencyVerdict, runLatency } from './lib/latency.ts';
import { type LoadFigures, pathsOf, startLoadChild } from './lib/load.ts';
import {
  cpuSecondsOf,
  freePort,
  installCleanup,
  isInterrupted,
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
import { buildServer, PRODUCTION_SERVER_ENV, serverCommandOf } from './lib/server.ts';
import { checkTargets } from './lib/targets.ts';
import type { SeedOutput } from './seed.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const RESULTS = join(ROOT, 'bench/results');
const PROFILES = join(RESULTS, 'profiles');
const SERVER = serverCommandOf(ROOT);

type Store = 'small' | 'postgres';

/** One scenario: which server answers, on which seeded store, under which requests. */
interface Scenario {
  n: number;
  key: string;
  title: string;
  server: 'baseline' | 'chatbridge';
  store: Store;
  op: 'get' | 'update';
  latency?: LatencySpec;
  delivery?: DeliverySpec;
}

const usage = (message: string): never => {
  console.error(`pnpm bench: ${message} (see bench/README.md)`);
  process.exit(2);
};
const { values: argv } = (() => {
  try {
    return parseArgs({ options: { quick: { type: 'boolean', default: false }, only: { type: 'string' }, 'cpu-prof': { type: 'string' } } });
  } catch (err) {
    return usage(err instanceof Error ? err.message : String(err));
  }
})();
const mode = argv.quick ? 'quick' : 'full';
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const settings = {
  mode,
  connections: 50,
  durationS: argv.quick ? 3 : 10,
  warmupS: argv.quick ? 1 : 3,
  /** A quick run measures the baseline for 1 s without a warm-up (but the first run's, on a cold process). */
  baselineDurationS: argv.quick ? 1 : 10,
  baselineWarmupS: argv.quick ? 0 : 3,
  endpoints: 1_000,
};
/**
 * Latency scenario n: `fanOut` streams (or webhooks) per endpoint, bot streams for 'bot'; warm-up 3 s, then
 * `fullS`. Quick: a tenth of the endpoints, a fifth of the rate, 1 s then 3 s, and no bare broadcaster beside it.
 */
const latency = (...[n, key, title, kind, endpoints, fanOut, rate, p99Ms, fullS = 20]: LatencyArgs): Scenario => ({
  ...{ n, key, title, server: 'chatbridge', op: 'get', store: kind === 'cross' ? 'postgres' : 'small' },
  latency: {
    ...{ kind, fanOut, p99Ms, endpoints: argv.quick ? endpoints / 10 : endpoints, ratePerSec: argv.quick ? rate / 5 : rate },
    ...{ durationS: argv.quick ? 3 : fullS, warmupS: argv.quick ? 1 : 3, ...(kind === 'streams' || kind === 'bot' ? { rssMB: 400 } : {}) },
    // The bare broadcaster opens as many streams again: full runs only, so CI's quick run stays short.
    bare: !argv.quick,
  },
});
type LatencyArgs = [number, string, string, LatencySpec['kind'], number, number, number, number, number?];

/**
 * Delivery scenario n: 100 `selfuse` endpoints, 1,000 messages/s for 30 s, each message to a webhook
 * (one endpoint's also to a rate-limited one). Quick: 200 messages/s for 3 s.
 */
const delivery = (n: number, key: string, title: string, store: Store): Scenario => ({
  ...{ n, key, title, server: 'chatbridge', store, op: 'update' },
  delivery: {
    ...{ endpoints: 100, ratePerSec: argv.quick ? 200 : 1_000, limitedPerSec: 3, durationS: argv.quick ? 3 : 30 },
    ...{ quietMs: argv.quick ? 2_000 : 5_000, maxWaitMs: argv.quick ? 8_000 : 60_000 },
  },
});

const SCENARIOS: Scenario[] = [
  { n: 1, key: 'baseline', title: 'baseline: bare node:http', server: 'baseline', store: 'small', op: 'get' },
  { n: 2, key: 'get-sqlite', title: 'getEndpoint, SQLite', server: 'chatbridge', store: 'small', op: 'get' },
  { n: 3, key: 'update-sqlite', title: 'updateEndpoint, SQLite', server: 'chatbridge', store: 'small', op: 'update' },
  { n: 4, key: 'get-postgres', title: 'getEndpoint, PostgreSQL', server: 'chatbridge', store: 'postgres', op: 'get' },
  { n: 5, key: 'update-postgres', title: 'updateEndpoint, PostgreSQL', server: 'chatbridge', store: 'postgres', op: 'update' },
  latency(7, 'latency-streams', 'update → event, endpoint streams, SQLite', 'streams', 5_000, 2, 1_000, 50, 30),
  latency(8, 'latency-bot', 'update → event, 4 bot streams, SQLite', 'bot', 10_000, 4, 1_000, 50),
  latency(9, 'latency-cross', 'update → event, other instance, PostgreSQL', 'cross', 5_000, 2, 1_000, 100),
  latency(10, 'latency-webhooks', 'update → webhook request, SQLite', 'webhooks', 5_000, 2, 500, 100),
  delivery(11, 'delivery', 'delivery: accepted → every webhook, SQLite', 'small'),
  delivery(12, 'delivery-postgres', 'delivery: accepted → every webhook, PostgreSQL', 'postgres'),
];
const BASELINE = SCENARIOS[0]!;

function pick(list: string | undefined): Set<string> | undefined {
  if (list === undefined) return undefined;
  return new Set(
    list
      .split(',')
      .filter(Boolean)
      .map((item) => {
        const s = SCENARIOS.find((d) => String(d.n) === item.trim() || d.key === item.trim());
        return s ? s.key : usage(`unknown scenario "${item}"; use 1-5, 7-12 or ${SCENARIOS.map((d) => d.key).join(', ')}`);
      }),
  );
}
const profiled = pick(argv['cpu-prof']) ?? new Set<string>();
const selected = pick(argv.only) ?? new Set(profiled.size > 0 ? profiled : SCENARIOS.map((s) => s.key));
for (const key of profiled) selected.add(key);
const chosen = SCENARIOS.filter((s) => selected.has(s.key));
const complete = chosen.length === SCENARIOS.length && profiled.size === 0;

const stamp = `${new Date().toISOString().slice(0, 19).replace(/:/g, '-')}Z`;
const log = (line: string) => console.log(line);

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
  const r = await runNode(`seeder (${name})`, ['bench/seed.ts', ...args, '--out', out], childEnv({ ...storeEnv, LOG_LEVEL: 'warn' }), ROOT);
  if (r.code !== 0) throw new Error(`seeding ${name} failed:\n${r.output.trim()}`);
  log(`  ${r.output.trim()}`);
  return { storeEnv, seed: JSON.parse(readFileSync(out, 'utf8')) as SeedOutput };
}

interface Target {
  proc: Spawned;
  origin: string;
  profile?: string;
}

/**
 * Starts the scenario's server (profiled when asked). A latency or delivery scenario's server runs exactly as `pnpm
 * start` runs it, without the bench's V8 flags: their 160 MB heap is sized for requests, not for 10,000 open streams.
 */
async function startTarget(
  s: Scenario,
  storeEnv: Record<string, string>,
  recordFile: string,
  profile = profiled.has(s.key),
): Promise<Target> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const name = profile ? `${s.key}-${stamp}.cpuprofile` : undefined;
  if (name) mkdirSync(PROFILES, { recursive: true });
  const profFlags = name ? ['--cpu-prof', '--cpu-prof-dir', PROFILES, '--cpu-prof-name', name] : [];
  const [args, env] =
    s.server === 'chatbridge'
      ? [[...(s.latency || s.delivery ? [] : SERVER.flags), SERVER.main], { ...PRODUCTION_SERVER_ENV, ...storeEnv }]
      : [['bench/baseline-server.ts', recordFile], { HOST: '127.0.0.1' }];
  const proc = spawnTracked(`${s.server} server`, [...profFlags, ...args], childEnv({ ...env, PORT: String(port) }), ROOT);
  try {
    await waitUntilServing(`${origin}${s.server === 'baseline' ? '/' : '/-/ready'}`, proc, 30_000);
  } catch (err) {
    await stopChild(proc, 2_000);
    throw err;
  }
  return { proc, origin, ...(name && { profile: relative(ROOT, join(PROFILES, name)) }) };
}

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
  ratio?: number;
  /** The baseline req/s the ratio is over. */
  baselineRps?: number;
  profile?: string;
  latency?: LatencyFigures;
  delivery?: DeliveryResult;
  verdict?: { pass: boolean; text: string };
  notes: string[];
}

/** The next update's number, for pre-checks and load children alike: no update repeats another. */
const updateSeq = { next: 1 };

/** A warm-up, then the measured window, from a fresh load generator. */
async function measure(
  s: Scenario,
  t: Target,
  endpoints: SeedOutput['endpoints'],
  warmupS: number,
  durationS: number,
): Promise<Partial<Result>> {
  const plan = { origin: t.origin, op: s.op, endpoints, connections: settings.connections, seqFrom: updateSeq.next };
  const generator = await startLoadChild(plan, ROOT, childEnv());
  try {
    const runFor = async (seconds: number) => {
      const run = await generator.run(seconds);
      updateSeq.next = run.nextSeq;
      return run;
    };
    const warm = warmupS > 0 ? (await runFor(warmupS)).figures : undefined;
    const cpu0 = cpuSecondsOf(t.proc.pid);
    const { figures } = await runFor(durationS);
    const cpu1 = cpuSecondsOf(t.proc.pid);
    const serverCpuS = cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : undefined;
    const rss = peakRssMB(t.proc.pid);
    return {
      figures,
      warmupProblems: warm ? warm.errors + warm.non2xx : 0,
      ...(rss !== undefined && { peakRssMB: rss }),
      ...(serverCpuS !== undefined && figures.requests > 0 && { cpuUsPerRequest: (serverCpuS * 1e6) / figures.requests }),
    };
  } finally {
    await generator.stop();
  }
}

/** One request before the load: the right status and body, so that a misconfiguration fails fast. */
async function precheck(s: Scenario, origin: string, endpoints: SeedOutput['endpoints'], recordJson: string): Promise<void> {
  const res = await fetch(origin + pathsOf(s.op, endpoints, updateSeq)(endpoints.length - 1), {
    method: s.op === 'get' ? 'GET' : 'POST',
    signal: AbortSignal.timeout(10_000),
  });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`pre-check answered ${res.status}: ${body.slice(0, 500)}`);
  if (s.op === 'get' && body !== recordJson) throw new Error(`the record (${body.length} B) differs from the baseline's body`);
  if (s.op === 'update' && !UPDATED_CONTENT.test((JSON.parse(body) as { meta: { message: { content: string } } }).meta.message.content)) {
    throw new Error('pre-check update did not change meta.message.content');
  }
}

/** After the update load: every update wrote all three of its fields, visible on a fresh read. */
async function verifyWrites(origin: string, endpoints: SeedOutput['endpoints']): Promise<string | undefined> {
  for (const e of endpoints.slice(0, 20)) {
    const res = await fetch(`${origin}/${e.id}?token=${e.token}`, { signal: AbortSignal.timeout(10_000) });
    const rec = (await res.json()) as {
      config: { logs: { chat_b: string | null } };
      meta: { message: { content: string; author: { name: string } } };
    };
    const seq = UPDATED_CONTENT.test(rec.meta.message.content) ? /^bench update (\d+)/.exec(rec.meta.message.content)![1] : undefined;
    if (!seq || rec.config.logs.chat_b !== `log-b-${seq}` || rec.meta.message.author.name !== `Bench author ${seq}`) {
      return `endpoint ${e.id} does not show a complete committed update: ${JSON.stringify(rec.meta.message).slice(0, 200)}`;
    }
  }
  return undefined;
}

async function stopTarget(t: Target, result: Result): Promise<void> {
  const end = await stopChild(t.proc, 20_000);
  if (end.killed || (end.code !== 0 && end.signal === null))
    result.notes.push(`server did not stop cleanly (${end.killed ? 'killed after 20 s' : `code ${end.code}`})`);
  const printed = t.proc.output().trim();
  if (printed) result.notes.push(`server printed at LOG_LEVEL=warn:\n    ${printed.split('\n').slice(-5).join('\n    ')}`);
  if (t.profile) result.profile = t.profile;
}

const resultOf = (s: Scenario, title = s.title): Result => ({ n: s.n, key: s.key, title, status: 'ok', notes: [] });
const failed = (err: unknown) => ({ status: 'failed' as const, reason: err instanceof Error ? err.message : String(err) });

async function runScenario(s: Scenario, data: Dataset, recordFile: string): Promise<Result> {
  const result = resultOf(s);
  const { endpoints, recordJson } = data.seed;
  let t: Target | undefined;
  try {
    t = await startTarget(s, data.storeEnv, recordFile);
    await precheck(s, t.origin, endpoints, recordJson);
    Object.assign(result, await measure(s, t, endpoints, settings.warmupS, settings.durationS));
    const problem = s.op === 'update' ? await verifyWrites(t.origin, endpoints) : undefined;
    if (problem) Object.assign(result, { status: 'failed', reason: `writes not verified: ${problem}` });
  } catch (err) {
    Object.assign(result, failed(err));
  } finally {
    if (t) await stopTarget(t, result);
  }
  return result;
}

/** The baseline's runs: its server starts at the first and stays up, idle in between, until finishBaseline(). */
const baselineRuns: { before?: string; result: Result }[] = [];
let baselineServer: Promise<Target> | undefined;

/** Measures the baseline now; `before` is the scenario measured next (none after the last). */
async function runBaseline(data: Dataset, recordFile: string, before?: string): Promise<void> {
  const result = resultOf(BASELINE);
  const warmupS = baselineRuns.length === 0 ? settings.warmupS : settings.baselineWarmupS;
  baselineRuns.push({ ...(before && { before }), result });
  log(`Running 1 baseline${before ? ` before ${before}` : ', after the last scenario'}...`);
  try {
    baselineServer ??= startTarget(BASELINE, data.storeEnv, recordFile);
    Object.assign(result, await measure(BASELINE, await baselineServer, data.seed.endpoints, warmupS, settings.baselineDurationS));
  } catch (err) {
    Object.assign(result, failed(err));
  }
}

/** Stops the server and sums the runs up as scenario 1: the run of median req/s, with the errors of all runs. */
async function finishBaseline(): Promise<Result> {
  const result = resultOf(BASELINE, `${BASELINE.title}, median of ${baselineRuns.length}`);
  const t = await baselineServer?.catch(() => undefined);
  if (t) await stopTarget(t, result);
  const done = baselineRuns.map((r) => r.result).filter((r) => r.figures);
  const failure = baselineRuns.find((r) => r.result.status === 'failed')?.result.reason;
  if (done.length === 0) return { ...result, status: 'failed', reason: failure ?? 'the baseline did not run' };
  const mid = done.sort((a, b) => a.figures!.requestsPerSec - b.figures!.requestsPerSec)[(done.length - 1) >> 1]!;
  const sum = (f: (r: Result) => number | undefined) => done.reduce((a, r) => a + (f(r) ?? 0), 0);
  const figures = { ...mid.figures!, errors: sum((r) => r.figures?.errors), non2xx: sum((r) => r.figures?.non2xx) };
  return {
    ...{ ...mid, ...result, ...(failure !== undefined && { status: 'failed', reason: failure }) },
    ...{ figures: { ...figures, requests: sum((r) => r.figures?.requests) }, warmupProblems: sum((r) => r.warmupProblems) },
  };
}

/** A scratch database on DATABASE_URL's server for this run's PostgreSQL scenarios, dropped afterwards (even on Ctrl-C). */
async function scratchDatabase(): Promise<{ storeEnv: Record<string, string>; drop: () => Promise<void> }> {
  const sql = async (statement: string) => {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    await client.query(statement).finally(() => client.end());
  };
  const name = `chatbridge_bench_${stamp.replace(/\W/g, '_').toLowerCase()}_${process.pid}`;
  await sql(`CREATE DATABASE ${name}`);
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${name}`;
  const drop = () =>
    sql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((err: Error) =>
      console.error(`  could not drop the database ${name}: ${err.message}`),
    );
  const unregister = onInterrupt(drop);
  return {
    storeEnv: { CHATBRIDGE_STORE: 'postgres', DATABASE_URL: url.href },
    drop: () => {
      unregister();
      return drop();
    },
  };
}

/** The seeding and servers of a latency or delivery scenario; what it started goes into `targets`. */
function harnessOf(s: Scenario, storeEnv: Record<string, string>, dir: string, targets: Target[]): Harness {
  return {
    root: ROOT,
    env: childEnv(),
    adminToken: randomBytes(24).toString('base64url'),
    seed: async (args) => (await seed(s.key, storeEnv, [...args, '--prefix', `${s.key}-`], dir)).seed.endpoints,
    servers: async (count, env) => {
      for (let i = 0; i < count; i++)
        targets.push(await startTarget(s, { ...storeEnv, ...env }, '', i === count - 1 && profiled.has(s.key)));
      return targets;
    },
  };
}

function logServerSettings(env: Record<string, string>): void {
  const openFiles = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
  const shown = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  log(`  server settings: ${shown.join(' ')}; open files: ${openFiles}`);
}

/** A latency scenario: its own store (a fresh SQLite file, or its own IDs in the scratch database) and servers. */
async function runLatencyScenario(s: Scenario, storeEnv: Record<string, string>, dir: string): Promise<Result> {
  const result = resultOf(s);
  const spec = s.latency!;
  const targets: Target[] = [];
  logServerSettings({ ...LATENCY_SERVER_ENV, ...(spec.kind === 'webhooks' && { CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE: 'true' }) });
  try {
    const figures = await runLatency(spec, harnessOf(s, storeEnv, dir, targets), log);
    if (typeof figures === 'string') Object.assign(result, { status: 'skipped', reason: figures });
    else Object.assign(result, { latency: figures, verdict: latencyVerdict(spec, figures) });
  } catch (err) {
    Object.assign(result, failed(err));
  } finally {
    for (const t of targets) await stopTarget(t, result);
  }
  return result;
}

/** The delivery scenario: its own SQLite store and server, then the bare relay (lib/delivery.ts). */
async function runDeliveryScenario(s: Scenario, storeEnv: Record<string, string>, dir: string): Promise<Result> {
  const result = resultOf(s);
  const targets: Target[] = [];
  logServerSettings({ ...LATENCY_SERVER_ENV, CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE: 'true' });
  try {
    result.delivery = await runDelivery(s.delivery!, harnessOf(s, storeEnv, dir, targets), log);
  } catch (err) {
    Object.assign(result, failed(err));
  } finally {
    for (const t of targets) await stopTarget(t, result);
  }
  return result;
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
  let dropDatabase = async () => {};
  try {
    buildServer(ROOT);
    log('Seeding...');
    const n = String(settings.endpoints);
    const data: Partial<Record<Store, Dataset>> = {};
    const sqlite = (name: string) => ({ CHATBRIDGE_STORE: 'sqlite', CHATBRIDGE_SQLITE_PATH: join(dir, `${name}.sqlite`) });
    data.small = await seed('small', sqlite('small'), ['--count', n], dir);
    const recordFile = join(dir, 'record.json');
    writeFileSync(recordFile, data.small.seed.recordJson);
    if (chosen.some((s) => s.store === 'postgres')) {
      if (!process.env.DATABASE_URL) {
        for (const s of chosen.filter((d) => d.store === 'postgres'))
          results.push({ ...resultOf(s), status: 'skipped', reason: 'postgres store: DATABASE_URL is not set' });
      } else {
        const scratch = await scratchDatabase();
        dropDatabase = scratch.drop;
        if (chosen.some((s) => s.store === 'postgres' && !s.latency && !s.delivery))
          data.postgres = await seed('postgres', scratch.storeEnv, ['--count', n], dir);
        else data.postgres = { storeEnv: scratch.storeEnv, seed: data.small.seed };
      }
    }
    const small = data.small;
    const baseline = selected.has(BASELINE.key) ? (before?: string) => runBaseline(small, recordFile, before) : undefined;
    for (const s of chosen) {
      const dataset = data[s.store];
      if (s === BASELINE || !dataset || isInterrupted()) continue;
      if (s.latency) {
        log(`Running ${s.n} ${s.title}...`);
        results.push(await runLatencyScenario(s, s.store === 'postgres' ? dataset.storeEnv : sqlite(s.key), dir));
        continue;
      }
      if (s.delivery) {
        log(`Running ${s.n} ${s.title}...`);
        results.push(await runDeliveryScenario(s, s.store === 'postgres' ? dataset.storeEnv : sqlite(s.key), dir));
        continue;
      }
      await baseline?.(s.key);
      log(`Running ${s.n} ${s.title}...`);
      results.push(await runScenario(s, dataset, recordFile));
    }
    if (!isInterrupted()) await baseline?.();
  } finally {
    if (baselineRuns.length > 0) results.push(await finishBaseline());
    await dropDatabase();
    removeTempDir(dir);
  }
  if (isInterrupted()) return 130;

  // Each scenario's ratio: over the mean of the baseline runs right before and right after it.
  const runs = baselineRuns;
  const rps = (i: number) => runs[i]?.result.figures?.requestsPerSec;
  const overall = results.find((r) => r.key === BASELINE.key)?.figures?.requestsPerSec;
  for (const r of results) {
    if (!r.figures || overall === undefined) continue;
    const at = runs.findIndex((b) => b.before === r.key);
    const beside = [rps(at), rps(at + 1)].filter((v): v is number => at !== -1 && v !== undefined);
    r.baselineRps = r.key === BASELINE.key || beside.length === 0 ? overall : beside.reduce((a, b) => a + b, 0) / beside.length;
    r.ratio = r.figures.requestsPerSec / r.baselineRps;
  }
  results.sort((a, b) => a.n - b.n);
  const targets = checkTargets(results);

  const opt = (v: number | undefined, f: (v: number) => string) => (v === undefined ? '-' : f(v));
  const mb = (v: number | undefined) => opt(v, (v) => `${v.toFixed(0)} MB`);
  const isLatency = (r: Result) => SCENARIOS.some((s) => s.key === r.key && s.latency);
  const isDelivery = (r: Result) => SCENARIOS.some((s) => s.key === r.key && s.delivery);
  /** One table: the first column left-aligned, the others right-aligned, each as wide as its widest cell. */
  const table = (
    head: string[],
    rows: Result[],
    cells: (r: Result) => string[] | undefined,
    footer: (r: Result) => string[] = () => [],
  ) => {
    const lines = rows.map((r) => [`${String(r.n).padStart(2)}  ${r.title}${r.profile ? ' (profiled)' : ''}`, ...(cells(r) ?? [])]);
    const w = head.map((h, i) => Math.max(h.length, ...lines.map((l) => (l.length > 1 ? l[i]!.length : 0))));
    const row = (l: string[]) => l.map((c, i) => (i === 0 ? c.padEnd(w[0]!) : c.padStart(w[i]!))).join(' ');
    log(`\n${row(head)}\n${'-'.repeat(row(head).length)}`);
    rows.forEach((r, i) => {
      log(lines[i]!.length > 1 ? row(lines[i]!) : `${lines[i]![0]!.padEnd(w[0]!)} ${r.status}: ${r.reason ?? ''}`);
      for (const line of lines[i]!.length > 1 ? footer(r) : []) log(`      ${line}`);
    });
  };
  const requestResults = results.filter((r) => !isLatency(r) && !isDelivery(r));
  if (requestResults.length > 0) {
    const head = [' #  scenario', 'req/s', 'x base', 'base r/s', 'p50 ms', 'p99 ms', 'errors', 'non-2xx', 'peak RSS', 'us/req'];
    table(head, requestResults, ({ figures: f, ...r }) =>
      f
        ? [
            fmtInt(f.requestsPerSec),
            opt(r.ratio, (v) => v.toFixed(2)),
            opt(r.baselineRps, fmtInt),
            f.p50Ms.toFixed(2),
            f.p99Ms.toFixed(2),
          ].concat([String(f.errors), String(f.non2xx), mb(r.peakRssMB), opt(r.cpuUsPerRequest, (v) => v.toFixed(0))])
        : undefined,
    );
    log(
      '    x base: req/s over the mean of the baseline runs right before and after the scenario (base r/s); row 1: the median of its runs.\n' +
        '    us/req: server CPU per request.',
    );
    const moved = runs.map((b) => (b.result.figures ? fmtInt(b.result.figures.requestsPerSec) : b.result.status));
    if (runs.length > 0) log(`    baseline runs, req/s: ${moved.join(' ')}`);
  }
  if (results.some(isLatency)) {
    const head = [' #  latency scenario', 'trig/s', 'expected', 'received', 'p50 ms', 'p99 ms', 'max ms', 'peak RSS', 'CPU'];
    const cells = ({ latency: f }: Result) =>
      f &&
      [fmtInt(f.triggersPerSec), fmtInt(f.expected), fmtInt(f.received), f.p50Ms.toFixed(1), f.p99Ms.toFixed(1), f.maxMs.toFixed(0)].concat(
        [mb(f.peakRssMB), opt(f.cpuPct, (v) => `${v.toFixed(0)}%`)],
      );
    table(head, results.filter(isLatency), cells, ({ latency: f, verdict }) => {
      const keys = f!.keys === undefined ? '' : `, ${fmtInt(f!.keys)} delivery keys, ${f!.duplicated} received twice or more`;
      const closed = f!.closed ? `, ${f!.closed} streams ended by the server` : '';
      const kb = (v: number | undefined) => opt(v, (v) => `${v.toFixed(1)} KB/stream`);
      const times = (a: number | undefined, b: number | undefined) =>
        opt(a !== undefined && b ? a / b : undefined, (v) => `${v.toFixed(2)}x`);
      const bare = f!.bare && [
        `bare node:http SSE broadcaster, same streams and rate: ${fmtInt(f!.bare.received)}/${fmtInt(f!.bare.expected)} events, ` +
          `p50 ${f!.bare.p50Ms.toFixed(1)} ms, p99 ${f!.bare.p99Ms.toFixed(1)} ms, ${kb(f!.bare.kbPerStream)} (peak RSS ${mb(f!.bare.peakRssMB)}, CPU ${opt(f!.bare.cpuPct, (v) => `${v.toFixed(0)}%`)}); ours ${kb(f!.kbPerStream)}`,
        `ours / bare: p50 ${times(f!.p50Ms, f!.bare.p50Ms)}, p99 ${times(f!.p99Ms, f!.bare.p99Ms)}, memory per stream ${times(f!.kbPerStream, f!.bare.kbPerStream)}`,
      ];
      return [
        `${fmtInt(f!.triggers)} triggers (answers ${JSON.stringify(f!.triggerStatuses)})${closed}${keys}; targets: ${verdict!.text}`,
        ...(bare ?? []),
      ];
    });
    log(
      '    latency: trigger sent → event (webhook request) received, one machine clock. CPU: the server(s), % of one core over the window.',
    );
  }
  if (results.some(isDelivery)) {
    const head = [
      ' #  delivery scenario',
      'msg/s',
      'due',
      'delivered',
      'missing',
      'twice',
      'order',
      'p50 ms',
      'p99 ms',
      'max ms',
      'peak RSS',
      'CPU',
    ];
    const cells = (f: DeliveryFigures) =>
      [fmtInt(f.perSec), fmtInt(f.expected), fmtInt(f.delivered), fmtInt(f.missing), fmtInt(f.duplicates), fmtInt(f.outOfOrder)].concat([
        f.p50Ms.toFixed(1),
        f.p99Ms.toFixed(1),
        f.maxMs.toFixed(0),
        mb(f.peakRssMB),
        opt(f.cpuPct, (v) => `${v.toFixed(0)}%`),
      ]);
    const times = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}x` : '-');
    table(
      head,
      results.filter(isDelivery),
      ({ delivery: d }) => d && cells(d.ours),
      ({ delivery: d }) => {
        const limited = (f: DeliveryFigures) =>
          `rate-limited webhook ${f.limited.delivered}/${f.limited.expected} (${f.limited.refused} posts answered 429)`;
        return [
          `${fmtInt(d!.ours.sent)} messages (answers ${JSON.stringify(d!.ours.statuses)}); ${limited(d!.ours)}`,
          `bare node:http relay, same messages: ${cells(d!.bare).join(' ')}`,
          `  ${fmtInt(d!.bare.sent)} messages (answers ${JSON.stringify(d!.bare.statuses)}); ${limited(d!.bare)}`,
          `ours / bare: p50 ${times(d!.ours.p50Ms, d!.bare.p50Ms)}, p99 ${times(d!.ours.p99Ms, d!.bare.p99Ms)}`,
        ];
      },
    );
    log(
      '    due: accepted messages x webhooks of their endpoint; delivered: the first receipt of each; twice: further receipts;\n' +
        '    order: first receipts numbered below one the webhook already had; latency: 200 received -> webhook request received.\n' +
        '    columns after "bare node:http relay": msg/s due delivered missing twice order p50 p99 max RSS CPU. Figures only: no target.',
    );
  }
  let bad = false;
  for (const r of results) {
    for (const note of r.notes) log(`  note ${r.n}: ${note}`);
    const problems =
      (r.figures ? r.figures.errors + r.figures.non2xx : 0) +
      (r.warmupProblems ?? 0) +
      (r.latency ? r.latency.triggers - (r.latency.triggerStatuses['200'] ?? 0) : 0) +
      (r.delivery ? r.delivery.ours.sent - (r.delivery.ours.statuses['200'] ?? 0) : 0);
    if (r.status === 'failed' || problems > 0) {
      bad = true;
      log(`\n!!! scenario ${r.n} (${r.key}) ${r.status === 'failed' ? `FAILED: ${r.reason}` : ''}`);
      if (problems > 0)
        log(
          `    ${problems} errors or non-2xx answers; status codes ${JSON.stringify(r.figures?.statusCodes ?? r.latency?.triggerStatuses ?? r.delivery?.ours.statuses)}; ${r.figures?.errorSamples.join('; ') ?? ''}`,
        );
    }
  }
  if (profiled.size > 0) log('\nTargets not checked: servers ran under --cpu-prof. Open the profiles in Chrome DevTools.');
  else if (requestResults.length > 0) {
    log(`\nTargets (informational${mode === 'quick' ? '; a quick run is indicative only' : ''}):`);
    for (const c of targets) log(`  ${c.status.padEnd(4)}  ${c.description.padEnd(46)} ${c.target.padEnd(17)} ${c.actual}`);
  }

  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  const report = {
    schema: 2,
    mode,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    commit: git('rev-parse', 'HEAD'),
    dirty: (git('status', '--porcelain', '--', 'packages', 'openapi') ?? '') !== '',
    machine: { node: process.version, cpus: os.cpus().length, loadAverageBefore: load0, loadAverageAfter: os.loadavg() },
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
    writeFileSync(join(RESULTS, `${latest}.json`), json);
    written.push(`bench/results/${latest}.json`);
  }
  log(`\nWrote ${written.join(', ')}`);
  log(
    `finished in ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s${bad ? ': FAILED SCENARIOS, ERRORS OR NON-2XX ANSWERS, see above' : ''}`,
  );
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
