// `pnpm bench`: chatbridge's HTTP benchmark. The server runs as its own process, started as
// `pnpm start` starts it (compiled, its node flags, production settings); autocannon loads it from a
// fresh child process per measurement (bench/load-child.ts), 50 connections. Latency scenarios: lib/latency.ts.
//
// How to run it and its options: bench/README.md.
//
// Scenarios (SCENARIOS below, in run order):
//   1 baseline          bare node:http (bench/baseline-server.ts) answering with a real record's bytes
//   2 get-sqlite        GET /{id}?token=..., 1,000 endpoints on SQLite, requests rotating over all of them
//   6 get-sqlite-large  as 2 with 100,000 endpoints stored; requests rotate over 5,000 of them
//   3 update-sqlite     POST /update/{id}, three overwrites that always change the record (checked after)
//   4 get-postgres      2 and 3 with CHATBRIDGE_STORE=postgres; skipped when DATABASE_URL is not set
//   5 update-postgres
//   7 latency-streams   update → event: 5,000 endpoints × 2 streams (GET /events/{endpoint}), 1,000 triggers/s
//   8 latency-bot       4 bot streams (GET /events) over 10,000 endpoints, 1,000 triggers/s
//   9 latency-cross     two instances on PostgreSQL: triggers to one, 10,000 streams on the other
//  10 latency-webhooks  update → webhook request: selfuse endpoints with two webhooks, 500 triggers/s
//   PostgreSQL scenarios run on a scratch database created in DATABASE_URL's server and dropped after.
//
// The machine's speed drifts within a run, so the baseline's server stays up (idle in between) and is
// measured right before every other scenario and once after the last: a scenario's ratio is over the
// mean of the two baseline runs beside it, and row 1 is the median of all its runs.
//
// Output: a table, the targets (informational), bench/results/<timestamp>.json, and for a full run of
// every scenario bench/results/latest.json. The exit code is 1 only when a scenario
// failed or a request errored or was answered non-2xx.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { LATENCY_SERVER_ENV, type LatencyFigures, type LatencySpec, latencyVerdict, runLatency } from './lib/latency.ts';
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
import { buildServer, PRODUCTION_SERVER_ENV, serverCommandOf } from './lib/server.ts';
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
  server: 'baseline' | 'chatbridge';
  store: Store;
  op: 'get' | 'update';
  /** Connections (default --connections, 50) and a fixed total request rate (default: as fast as answered). */
  connections?: number;
  ratePerSec?: number;
  latency?: LatencySpec;
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
        'latency-duration': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    return usage(err instanceof Error ? err.message : String(err));
  }
})();
if (argv.help) {
  console.log(
    readFileSync(fileURLToPath(import.meta.url), 'utf8')
      .split('\nimport ')[0]!
      .replace(/^\/\/ ?/gm, ''),
  );
  process.exit(0);
}
const mode = argv.quick ? 'quick' : 'full';
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
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
/** A latency scenario (its warm-up: 3 s, quick 1 s); quick: a tenth of the endpoints, a fifth of the rate, 3 s. */
const latency = (
  kind: LatencySpec['kind'],
  endpoints: number,
  fanOut: number,
  ratePerSec: number,
  p99Ms: number,
  fullS = 20,
): LatencySpec => ({
  ...{ kind, fanOut, p99Ms, endpoints: argv.quick ? endpoints / 10 : endpoints, ratePerSec: argv.quick ? ratePerSec / 5 : ratePerSec },
  ...{ durationS: num(argv['latency-duration'], argv.quick ? 3 : fullS, 'latency-duration'), warmupS: argv.quick ? 1 : 3 },
  ...(kind === 'streams' || kind === 'bot' ? { rssMB: 400 } : {}),
});
const L = { server: 'chatbridge', op: 'get' } as const;

const SCENARIOS: Scenario[] = [
  { n: 1, key: 'baseline', title: 'baseline: bare node:http', server: 'baseline', store: 'small', op: 'get' },
  { n: 2, key: 'get-sqlite', title: 'getEndpoint, SQLite', server: 'chatbridge', store: 'small', op: 'get' },
  {
    n: 6,
    key: 'get-sqlite-large',
    title: `getEndpoint, SQLite, ${fmtInt(settings.largeEndpoints)} endpoints`,
    server: 'chatbridge',
    store: 'large',
    op: 'get',
  },
  { n: 3, key: 'update-sqlite', title: 'updateEndpoint, SQLite', server: 'chatbridge', store: 'small', op: 'update' },
  { n: 4, key: 'get-postgres', title: 'getEndpoint, PostgreSQL', server: 'chatbridge', store: 'postgres', op: 'get' },
  { n: 5, key: 'update-postgres', title: 'updateEndpoint, PostgreSQL', server: 'chatbridge', store: 'postgres', op: 'update' },
  {
    n: 7,
    key: 'latency-streams',
    title: 'update → event, endpoint streams, SQLite',
    store: 'small',
    ...L,
    latency: latency('streams', 5_000, 2, 1_000, 50, 30),
  },
  {
    n: 8,
    key: 'latency-bot',
    title: 'update → event, 4 bot streams, SQLite',
    store: 'small',
    ...L,
    latency: latency('bot', 10_000, 4, 1_000, 50),
  },
  {
    n: 9,
    key: 'latency-cross',
    title: 'update → event, other instance, PostgreSQL',
    store: 'postgres',
    ...L,
    latency: latency('cross', 5_000, 2, 1_000, 100),
  },
  {
    n: 10,
    key: 'latency-webhooks',
    title: 'update → webhook request, SQLite',
    store: 'small',
    ...L,
    latency: latency('webhooks', 5_000, 2, 500, 100),
  },
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
        return s ? s.key : usage(`unknown scenario "${item}"; use 1-10 or ${SCENARIOS.map((d) => d.key).join(', ')}`);
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

const stamp = new Date()
  .toISOString()
  .replace(/\.\d+Z$/, 'Z')
  .replace(/:/g, '-');
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
  const r = await runNode(
    `seeder (${name})`,
    ['bench/seed.ts', ...args, '--out', out],
    childEnv({ ...storeEnv, LOG_LEVEL: 'warn' }),
    ROOT,
    10 * 60_000,
  );
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
 * Starts the scenario's server (profiled when asked). A latency scenario's server runs exactly as `pnpm start` runs
 * it, without the bench's V8 flags: their 160 MB heap is sized for requests, not for 10,000 open streams.
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
  const proc =
    s.server === 'chatbridge'
      ? spawnTracked(
          'chatbridge server',
          [...(s.latency ? [] : SERVER.flags), ...profFlags, SERVER.main],
          childEnv({ ...PRODUCTION_SERVER_ENV, PORT: String(port), ...storeEnv }),
          ROOT,
        )
      : spawnTracked(
          'baseline server',
          [...profFlags, 'bench/baseline-server.ts', recordFile],
          childEnv({ PORT: String(port), HOST: '127.0.0.1' }),
          ROOT,
        );
  try {
    await waitUntilServing(`${origin}${s.server === 'baseline' ? '/' : '/-/ready'}`, proc, 30_000);
  } catch (err) {
    await stopChild(proc, 2_000);
    throw err;
  }
  return { proc, origin, ...(name && { profile: relative(ROOT, join(PROFILES, name)) }) };
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
  latency?: LatencyFigures;
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
  const plan = {
    origin: t.origin,
    op: s.op,
    endpoints,
    connections: s.connections ?? settings.connections,
    seqFrom: updateSeq.next,
    ...(s.ratePerSec && { ratePerSec: s.ratePerSec }),
  };
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
      ...(serverCpuS !== undefined &&
        busy0 !== undefined &&
        busy1 !== undefined && { otherCpuPct: Math.max(0, ((busy1 - busy0 - serverCpuS - loadCpuS) / wallS) * 100) }),
    };
  } finally {
    await generator.stop();
  }
}

/** One request before the load: the right status and body, so that a misconfiguration fails fast. */
async function precheck(
  s: Scenario,
  origin: string,
  endpoints: SeedOutput['endpoints'],
  recordJson: string,
  notes: string[],
): Promise<void> {
  const res = await fetch(origin + pathsOf(s.op, endpoints, updateSeq)(endpoints.length - 1), {
    method: s.op === 'get' ? 'GET' : 'POST',
    signal: AbortSignal.timeout(10_000),
  });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`pre-check answered ${res.status}: ${body.slice(0, 500)}`);
  if (s.op === 'get' && body !== recordJson)
    notes.push(`response body (${body.length} B) differs from the baseline's (${recordJson.length} B)`);
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

async function runScenario(s: Scenario, data: Dataset, recordFile: string): Promise<Result> {
  const result = resultOf(s);
  const { endpoints, recordJson } = data.seed;
  let t: Target | undefined;
  try {
    t = await startTarget(s, data.storeEnv, recordFile);
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
      this.target ??= startTarget(BASELINE, this.data.storeEnv, this.recordFile);
      const t = await this.target;
      const warmupS = first ? Math.max(settings.warmupS, settings.baselineWarmupS) : settings.baselineWarmupS;
      Object.assign(result, await measure(BASELINE, t, this.data.seed.endpoints, warmupS, settings.baselineDurationS));
    } catch (err) {
      Object.assign(result, { status: 'failed', reason: err instanceof Error ? err.message : String(err) });
    }
  }

  /** Stops the server and sums the runs up as scenario 1: the run of median req/s, with the errors of all runs. */
  async finish(): Promise<Result> {
    const result = resultOf(BASELINE, `${BASELINE.title}, median of ${this.runs.length}`);
    const t = await this.target?.catch(() => undefined);
    if (t) await stopTarget(t, result);
    const done = this.runs.map((r) => r.result).filter((r) => r.figures);
    const failure = this.runs.find((r) => r.result.status === 'failed')?.result.reason;
    if (done.length === 0) return { ...result, status: 'failed', reason: failure ?? 'the baseline did not run' };
    const mid = done.sort((a, b) => a.figures!.requestsPerSec - b.figures!.requestsPerSec)[(done.length - 1) >> 1]!;
    const f = { ...mid.figures!, errors: 0, non2xx: 0, requests: 0 };
    for (const r of done)
      [f.errors, f.non2xx, f.requests] = [f.errors + r.figures!.errors, f.non2xx + r.figures!.non2xx, f.requests + r.figures!.requests];
    const warmupProblems = done.reduce((a, r) => a + (r.warmupProblems ?? 0), 0);
    return {
      ...mid,
      ...result,
      ...(failure !== undefined && { status: 'failed', reason: failure }),
      figures: f,
      warmupProblems,
      notes: result.notes,
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Main

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

/** A latency scenario: its own store (a fresh SQLite file, or its own IDs in the scratch database) and servers. */
async function runLatencyScenario(s: Scenario, storeEnv: Record<string, string>, dir: string): Promise<Result> {
  const result = resultOf(s);
  const spec = s.latency!;
  const targets: Target[] = [];
  log(
    `  server settings: ${Object.entries(LATENCY_SERVER_ENV)
      .map(([k, v]) => `${k}=${v}`)
      .join(
        ' ',
      )}${spec.kind === 'webhooks' ? ' CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE=true' : ''}; open files: ${execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim()}`,
  );
  try {
    const figures = await runLatency(
      spec,
      {
        root: ROOT,
        env: childEnv(),
        adminToken: randomBytes(24).toString('base64url'),
        seed: async (args) => (await seed(s.key, storeEnv, [...args, '--prefix', `${s.key}-`], dir)).seed.endpoints,
        servers: async (count, env) => {
          for (let i = 0; i < count; i++)
            targets.push(await startTarget(s, { ...storeEnv, ...env }, '', i === count - 1 && profiled.has(s.key)));
          return targets;
        },
      },
      log,
    );
    if (typeof figures === 'string') Object.assign(result, { status: 'skipped', reason: figures });
    else Object.assign(result, { latency: figures, verdict: latencyVerdict(spec, figures) });
  } catch (err) {
    Object.assign(result, { status: 'failed', reason: err instanceof Error ? err.message : String(err) });
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
  let baseline: Baseline | undefined;
  let dropDatabase = async () => {};
  try {
    buildServer(ROOT);
    log('Seeding...');
    const n = String(settings.smallEndpoints);
    const data: Partial<Record<Store, Dataset>> = {};
    const sqlite = (name: string) => ({ CHATBRIDGE_STORE: 'sqlite', CHATBRIDGE_SQLITE_PATH: join(dir, `${name}.sqlite`) });
    data.small = await seed('small', sqlite('small'), ['--count', n, '--sample', n], dir);
    if (chosen.some((s) => s.store === 'large')) {
      data.large = await seed(
        'large',
        sqlite('large'),
        ['--count', String(settings.largeEndpoints), '--sample', String(settings.largeSampled)],
        dir,
      );
    }
    const recordFile = join(dir, 'record.json');
    writeFileSync(recordFile, data.small.seed.recordJson);
    if (chosen.some((s) => s.store === 'postgres')) {
      if (!process.env.DATABASE_URL) {
        for (const s of chosen.filter((d) => d.store === 'postgres'))
          results.push({ ...resultOf(s), status: 'skipped', reason: 'postgres store: DATABASE_URL is not set' });
      } else {
        const scratch = await scratchDatabase();
        dropDatabase = scratch.drop;
        if (chosen.some((s) => s.store === 'postgres' && !s.latency))
          data.postgres = await seed('postgres', scratch.storeEnv, ['--count', n, '--sample', n], dir);
        else data.postgres = { storeEnv: scratch.storeEnv, seed: data.small.seed };
      }
    }
    if (selected.has(BASELINE.key)) baseline = new Baseline(data.small, recordFile);
    for (const s of chosen) {
      const dataset = data[s.store];
      if (s === BASELINE || !dataset || isInterrupted()) continue;
      if (s.latency) {
        log(`Running ${s.n} ${s.title}...`);
        results.push(await runLatencyScenario(s, s.store === 'postgres' ? dataset.storeEnv : sqlite(s.key), dir));
        continue;
      }
      await baseline?.run(s.key);
      log(`Running ${s.n} ${s.title}...`);
      results.push(await runScenario(s, dataset, recordFile));
    }
    if (!isInterrupted()) await baseline?.run(undefined);
  } finally {
    if (baseline) results.push(await baseline.finish());
    await dropDatabase();
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
      r.notes.push(
        `the baseline moved ${(((beside[1]! - beside[0]!) / beside[0]!) * 100).toFixed(0)}% across it: the machine was noisy, its ratio is unreliable`,
      );
    }
  }
  results.sort((a, b) => a.n - b.n);
  const targets = checkTargets(results);

  /** A table row: the first cell padded to `first`, the others right-aligned to `w`. */
  const cols = (first: number, w: number[], cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(first) : c.padStart(w[i - 1]!))).join(' ');
  const opt = (v: number | undefined, f: (v: number) => string) => (v === undefined ? '-' : f(v));
  const label = (r: Result) => `${String(r.n).padStart(2)}  ${r.title}${r.profile ? ' (profiled)' : ''}`;
  const isLatency = (r: Result) => SCENARIOS.some((s) => s.key === r.key && s.latency);
  const requestResults = results.filter((r) => !isLatency(r));
  if (requestResults.length > 0) {
    const w = [8, 6, 8, 7, 7, 6, 7, 9, 6, 6];
    const head = cols(46, w, [
      ' #  scenario',
      'req/s',
      'x base',
      'base r/s',
      'p50 ms',
      'p99 ms',
      'errors',
      'non-2xx',
      'peak RSS',
      'us/req',
      'other',
    ]);
    log(`\n${head}\n${'-'.repeat(head.length)}`);
    for (const r of requestResults) {
      const f = r.figures;
      if (!f) log(`${label(r).padEnd(46)} ${r.status}: ${r.reason ?? ''}`);
      else {
        const mb = opt(r.peakRssMB, (v) => `${v.toFixed(0)} MB`);
        const [ratio, base, cpu, other] = [
          opt(r.ratio, (v) => v.toFixed(2)),
          opt(r.baselineRps, fmtInt),
          opt(r.cpuUsPerRequest, (v) => v.toFixed(0)),
          opt(r.otherCpuPct, (v) => `${v.toFixed(0)}%`),
        ];
        log(
          cols(46, w, [
            label(r),
            fmtInt(f.requestsPerSec),
            ratio,
            base,
            f.p50Ms.toFixed(2),
            f.p99Ms.toFixed(2),
            String(f.errors),
            String(f.non2xx),
            mb,
            cpu,
            other,
          ]),
        );
      }
    }
    log(
      '    x base: req/s over the mean of the baseline runs right before and after the scenario (base r/s); row 1: the median of its runs.\n' +
        '    us/req: server CPU per request. other: CPU of every other process on the machine, % of one core (noise).',
    );
  }
  if (runs.length > 0)
    log(
      `  baseline runs, req/s: ${runs.map((b) => (b.result.figures ? fmtInt(b.result.figures.requestsPerSec) : b.result.status)).join(' ')}`,
    );
  if (results.some(isLatency)) {
    const w = [6, 8, 8, 7, 7, 7, 8, 5];
    const head = cols(54, w, [' #  latency scenario', 'trig/s', 'expected', 'received', 'p50 ms', 'p99 ms', 'max ms', 'peak RSS', 'CPU']);
    log(`\n${head}\n${'-'.repeat(head.length)}`);
    for (const r of results.filter(isLatency)) {
      const f = r.latency;
      if (!f) log(`${label(r).padEnd(54)} ${r.status}: ${r.reason ?? ''}`);
      else {
        const [mb, cpu] = [opt(f.peakRssMB, (v) => `${v.toFixed(0)} MB`), opt(f.cpuPct, (v) => `${v.toFixed(0)}%`)];
        log(
          cols(54, w, [
            label(r),
            fmtInt(f.triggersPerSec),
            fmtInt(f.expected),
            fmtInt(f.received),
            f.p50Ms.toFixed(1),
            f.p99Ms.toFixed(1),
            f.maxMs.toFixed(0),
            mb,
            cpu,
          ]),
        );
        const keys = `${f.closed ? `, ${f.closed} streams ended by the server` : ''}${f.keys === undefined ? '' : `, ${fmtInt(f.keys)} delivery keys, ${f.duplicated} received twice or more`}`;
        log(`      ${fmtInt(f.triggers)} triggers (answers ${JSON.stringify(f.triggerStatuses)})${keys}; targets: ${r.verdict!.text}`);
      }
    }
    log(
      '    latency: trigger sent → event (webhook request) received, one machine clock. CPU: the server(s), % of one core over the window.',
    );
  }
  let bad = false;
  for (const r of results) {
    for (const note of r.notes) log(`  note ${r.n}: ${note}`);
    const problems =
      (r.figures ? r.figures.errors + r.figures.non2xx : 0) +
      (r.warmupProblems ?? 0) +
      (r.latency ? r.latency.triggers - (r.latency.triggerStatuses['200'] ?? 0) : 0);
    if (r.status === 'failed' || problems > 0) {
      bad = true;
      log(`\n!!! scenario ${r.n} (${r.key}) ${r.status === 'failed' ? `FAILED: ${r.reason}` : ''}`);
      if (problems > 0)
        log(
          `    ${problems} errors or non-2xx answers; status codes ${JSON.stringify(r.figures?.statusCodes ?? r.latency?.triggerStatuses)}; ${r.figures?.errorSamples.join('; ') ?? ''}`,
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
    machine: {
      node: process.version,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      loadAverageBefore: load0,
      loadAverageAfter: os.loadavg(),
    },
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
