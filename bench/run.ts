// `pnpm bench`: chatbridge's HTTP benchmark. The server runs as its own process, started exactly as
// `pnpm start` starts it (production settings); autocannon generates the load from a fresh child
// process per measurement (bench/load-child.ts), so that no scenario is loaded by a process that
// earlier scenarios have grown.
//
//   pnpm bench                      full run (~3-5 min): 10 s per scenario after a 3 s warm-up, and
//                                   as long again for the baseline beside each scenario
//   pnpm bench --quick              under a minute: 3 s after 1 s, 10,000 endpoints in scenario 6,
//                                   the baseline beside each scenario for 1 s (no warm-up);
//                                   figures are printed, targets are indicative only
//   pnpm bench --cpu-prof=get-sqlite,update-sqlite
//                                   runs those scenarios with the server under --cpu-prof; profiles go
//                                   to bench/results/profiles, and their top functions are printed
//   pnpm bench --only=1,2           a subset (keys or numbers)
//   options: --duration S --warmup S --connections N --large N
//            --baseline-duration S --baseline-warmup S: each baseline run (default: as the scenarios;
//            --quick: 1 s without a warm-up, but for the first run); the warm-up may be 0
//
// Scenarios (50 connections each):
//   1 baseline          bare node:http (bench/baseline-server.ts) answering with a real record's bytes;
//                       measured right before every other scenario and once after the last (see below)
//   2 get-sqlite        GET /{id}?token=..., 1,000 endpoints on SQLite, requests rotate over all of them
//   3 update-sqlite     POST /update/{id}, three scalar overwrites that always change the record
//   4 get-postgres      as 2 and 3 with CHATBRIDGE_STORE=postgres and DATABASE_URL; run only when
//   5 update-postgres   DATABASE_URL is set and the server starts with that store, else "skipped"
//   6 get-sqlite-large  as 2 with 100,000 endpoints stored; requests rotate over 5,000 of them
//   7 floor             Express + express-openapi-validator alone (bench/floor-server.ts) validating
//                       the requests of 2 and answering with the record's bytes: the stack's ceiling
//
// The machine's speed drifts within a run, so the baseline runs beside each scenario: its server
// starts once and stays up (idle in between), and is loaded right before every scenario and once
// after the last (1, 7, 1, 2, 1, 6, ..., 5, 1). A scenario's ratio is over the mean of the baseline
// runs right before and right after it; the table prints that denominator per scenario, and row 1 is
// the median of all the baseline's runs. The runs' spread tells how much the machine's speed moved.
//
// Output: a table, PASS/FAIL per target (informational), bench/results/<timestamp>.json, and for a
// full run of every scenario bench/results/latest.json and latest.svg. The exit code is 1 only when a
// scenario failed or any request errored or was answered non-2xx.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { checkTargets, type TargetCheck } from './lib/targets.ts';
import type { BaselineRun, ScenarioResult } from './lib/types.ts';
import { type LoadFigures, pathsOf } from './lib/load.ts';
import { LoadChild, type LoadPlan } from './lib/loadChild.ts';
import {
  cpuSecondsOf,
  freePort,
  installCleanup,
  isInterrupted,
  machineBusySeconds,
  makeTempDir,
  memoryOf,
  onInterrupt,
  removeTempDir,
  runNode,
  spawnTracked,
  stopChild,
  type Spawned,
  waitUntilServing,
} from './lib/procs.ts';
import { UPDATED_CONTENT } from './lib/record.ts';
import { PRODUCTION_SERVER_ENV, buildServer, median, serverCommandOf } from './lib/server.ts';
import { deleteSeededRows } from './lib/seededRows.ts';
import { vacuumAndReport } from './lib/vacuum.ts';
import { barChart } from './lib/svg.ts';
import { type Collections, collectionsBetween, describeCollections, parseCollections } from './lib/collections.ts';
import { describeGroupCommits, parseGroupCommits } from './lib/groupCommits.ts';
import { scrapeMetrics } from './lib/serverMetrics.ts';
import { formatSummary, summarizeProfile } from './profile-summary.ts';
import type { SeedOutput } from './seed.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const RESULTS = join(ROOT, 'bench/results');
const PROFILES = join(RESULTS, 'profiles');
/** The server as `pnpm start` runs it (root package.json): its V8 flags and compiled entry point. */
const SERVER = serverCommandOf(ROOT);

// ---------------------------------------------------------------------------------------------
// Options

function usage(message: string): never {
  console.error(`pnpm bench: ${message} (see pnpm bench --help)`);
  process.exit(2);
}

let parsed: ReturnType<typeof parseOptions>;
const parseOptions = () => parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    only: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    large: { type: 'string' },
    'baseline-duration': { type: 'string' },
    'baseline-warmup': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
try {
  parsed = parseOptions();
} catch (err) {
  usage(err instanceof Error ? err.message : String(err));
}
const argv = parsed.values;
if (argv.help) {
  console.log(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\nimport ')[0]!.replace(/^\/\/ ?/gm, ''));
  process.exit(0);
}

const mode: 'full' | 'quick' = argv.quick ? 'quick' : 'full';
const num = (v: string | undefined, fallback: number, what: string, zero = false) => {
  const n = v === undefined ? fallback : Number(v);
  if (!Number.isFinite(n) || n < 0 || (n === 0 && !zero)) usage(`--${what} must be a positive number${zero ? ' or 0' : ''}`);
  return n;
};
const durationS = num(argv.duration, mode === 'quick' ? 3 : 10, 'duration');
const warmupS = num(argv.warmup, mode === 'quick' ? 1 : 3, 'warmup');
const settings = {
  mode,
  connections: num(argv.connections, 50, 'connections'),
  durationS,
  warmupS,
  /**
   * Each baseline run: as long as a scenario's by default, so that it sees the same stretch of the
   * machine's drift. A quick run, which must stay under a minute, measures 1 s without a warm-up: its
   * first run warms up for at least warmupS (a cold process), later ones load a warm server (from a
   * fresh load generator, as every measurement).
   */
  baselineDurationS: num(argv['baseline-duration'], mode === 'quick' ? 1 : durationS, 'baseline-duration'),
  baselineWarmupS: num(argv['baseline-warmup'], mode === 'quick' ? 0 : warmupS, 'baseline-warmup', true),
  smallEndpoints: 1_000,
  largeEndpoints: num(argv.large, mode === 'quick' ? 10_000 : 100_000, 'large'),
  largeSampled: mode === 'quick' ? 2_000 : 5_000,
  /** Seeding SQLite goes through the store API unless that is projected to take longer than this. */
  seedStoreBudgetS: mode === 'quick' ? 5 : 45,
  serverEnv: PRODUCTION_SERVER_ENV,
};

interface ScenarioDef {
  n: number;
  key: string;
  title: string;
  target: 'baseline' | 'floor' | 'sqlite-small' | 'sqlite-large' | 'postgres';
  op: 'get' | 'update';
}

const SCENARIOS: ScenarioDef[] = [
  { n: 1, key: 'baseline', title: 'baseline: bare node:http', target: 'baseline', op: 'get' },
  { n: 2, key: 'get-sqlite', title: 'getEndpoint, SQLite', target: 'sqlite-small', op: 'get' },
  { n: 3, key: 'update-sqlite', title: 'updateEndpoint, SQLite', target: 'sqlite-small', op: 'update' },
  { n: 4, key: 'get-postgres', title: 'getEndpoint, PostgreSQL', target: 'postgres', op: 'get' },
  { n: 5, key: 'update-postgres', title: 'updateEndpoint, PostgreSQL', target: 'postgres', op: 'update' },
  {
    n: 6,
    key: 'get-sqlite-large',
    title: `getEndpoint, SQLite, ${settings.largeEndpoints.toLocaleString('en-US')} endpoints`,
    target: 'sqlite-large',
    op: 'get',
  },
  { n: 7, key: 'floor', title: 'floor: Express + validator, same bytes', target: 'floor', op: 'get' },
];
/**
 * Run order: the floor, then the three GET-on-SQLite figures back to back (their ratios matter most),
 * writes after. The baseline (1) runs before each of them and after the last.
 */
const ORDER = [1, 7, 2, 6, 3, 4, 5];
const BASELINE = SCENARIOS[0]!;
const tagOf = (r: { n: number }) => String(r.n);

function pick(list: string | undefined): Set<number> | undefined {
  if (list === undefined) return undefined;
  const picked = new Set<number>();
  for (const item of list.split(',').map((s) => s.trim()).filter(Boolean)) {
    const def = SCENARIOS.find((s) => String(s.n) === item || s.key === item || (item === 'get-sqlite-100k' && s.n === 6));
    if (!def) usage(`unknown scenario "${item}"; use 1-7 or ${SCENARIOS.map((s) => s.key).join(', ')}`);
    picked.add(def.n);
  }
  return picked;
}
const profiled = pick(argv['cpu-prof']) ?? new Set<number>();
const selected = pick(argv.only) ?? (profiled.size > 0 ? new Set(profiled) : new Set(SCENARIOS.map((s) => s.n)));
for (const n of profiled) selected.add(n);
const complete = selected.size === SCENARIOS.length && profiled.size === 0;
/** The baseline runs beside every measured scenario when it is selected (a full run, or --only=1,...). */
const bracketed = selected.has(1);

// ---------------------------------------------------------------------------------------------
// Helpers

const stamp = new Date().toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
const runId = `${Date.now().toString(36)}${process.pid.toString(36)}`;
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const signed = (pct: number) => `${pct >= 0 ? '+' : ''}${pct.toFixed(0)}`;
const log = (line: string) => console.log(line);

/** The environment a child gets: ours without any CHATBRIDGE_* setting, plus `extra`. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CHATBRIDGE_') && k !== 'DATABASE_URL') env[k] = v;
  return { ...env, ...extra };
}

/** The PostgreSQL store's settings: DATABASE_URL and any CHATBRIDGE_POSTGRES_* / CHATBRIDGE_PG_* we were given (PG* pass through anyway). */
function postgresEnv(): Record<string, string> {
  const env: Record<string, string> = { CHATBRIDGE_STORE: 'postgres' };
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && (k === 'DATABASE_URL' || k.startsWith('CHATBRIDGE_POSTGRES_') || k.startsWith('CHATBRIDGE_PG_'))) env[k] = v;
  }
  return env;
}

interface Dataset {
  /** The store settings for the server and the seeder. */
  storeEnv: Record<string, string>;
  seed: SeedOutput;
}

async function seed(name: string, storeEnv: Record<string, string>, count: number, sample: number, prefix: string, dir: string): Promise<Dataset> {
  const out = join(dir, `${name}.seed.json`);
  const started = Date.now();
  const r = await runNode(
    `seeder (${name})`,
    ['bench/seed.ts', '--count', String(count), '--sample', String(sample), '--prefix', prefix, '--out', out, '--store-budget', String(settings.seedStoreBudgetS)],
    childEnv({ ...storeEnv, LOG_LEVEL: 'warn' }),
    ROOT,
    10 * 60_000,
  );
  if (r.code !== 0) throw new Error(`seeding ${name} failed:\n${r.output.trim()}`);
  log(`  ${r.output.trim()} [${((Date.now() - started) / 1000).toFixed(1)} s with start-up]`);
  return { storeEnv, seed: JSON.parse(readFileSync(out, 'utf8')) as SeedOutput };
}

interface Target {
  proc: Spawned;
  origin: string;
  profileFile?: string;
  /** performance.now() when the process was spawned (about when its profile starts). */
  spawnedAt: number;
}

async function startTarget(def: ScenarioDef, data: Dataset, recordFile: string, timeoutMs = 30_000): Promise<Target> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  let profileFile: string | undefined;
  const nodeFlags: string[] = [];
  const spawnedAt = performance.now();
  if (profiled.has(def.n)) {
    mkdirSync(PROFILES, { recursive: true });
    const name = `${def.key}-${stamp}.cpuprofile`;
    nodeFlags.push('--cpu-prof', '--cpu-prof-dir', PROFILES, '--cpu-prof-name', name);
    profileFile = join(PROFILES, name);
  }
  const proc =
    def.target === 'baseline' || def.target === 'floor'
      ? spawnTracked(
          `${def.target} server`,
          [...(def.target === 'floor' ? SERVER.flags : []), ...nodeFlags, `bench/${def.target}-server.ts`, recordFile],
          childEnv({ PORT: String(port), HOST: '127.0.0.1' }),
          ROOT,
        )
      : spawnTracked(
          'chatbridge server',
          [...SERVER.flags, ...nodeFlags, SERVER.main],
          childEnv({ ...settings.serverEnv, PORT: String(port), ...data.storeEnv }),
          ROOT,
        );
  try {
    await waitUntilServing(`${origin}${def.target === 'baseline' ? '/' : '/-/ready'}`, proc, timeoutMs);
  } catch (err) {
    await stopChild(proc, 2_000);
    throw err;
  }
  return { proc, origin, spawnedAt, ...(profileFile && { profileFile }) };
}

/** The next update's number, for pre-checks and load children alike: no update repeats another. */
const updateSeq = { next: 1 };

/** One request before the load: the right status and body, so a misconfiguration fails fast and clearly. */
async function precheck(def: ScenarioDef, origin: string, path: string, recordJson: string, notes: string[]): Promise<void> {
  const res = await fetch(origin + path, { method: def.op === 'get' ? 'GET' : 'POST', signal: AbortSignal.timeout(10_000) });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`pre-check ${def.op === 'get' ? 'GET' : 'POST'} answered ${res.status}: ${body.slice(0, 500)}`);
  if (def.op === 'get' && body !== recordJson) notes.push(`response body (${body.length} B) differs from the baseline's (${recordJson.length} B)`);
  if (def.op === 'update') {
    const rec = JSON.parse(body) as { meta: { message: { content: string } } };
    if (!UPDATED_CONTENT.test(rec.meta.message.content)) throw new Error('pre-check update did not change meta.message.content');
  }
}

/** After the update load: the writes are visible on a fresh read. */
async function verifyWrites(origin: string, endpoints: SeedOutput['endpoints']): Promise<string | undefined> {
  for (const e of endpoints.slice(0, 20)) {
    const res = await fetch(`${origin}/${e.id}?token=${e.token}`, { signal: AbortSignal.timeout(10_000) });
    const rec = (await res.json()) as { config: { logs: { chat_b: string | null } }; meta: { message: { content: string; author: { name: string } } } };
    const m = UPDATED_CONTENT.exec(rec.meta.message.content);
    const seq = m ? /^bench update (\d+)/.exec(rec.meta.message.content)![1] : undefined;
    if (!seq || rec.config.logs.chat_b !== `log-b-${seq}` || rec.meta.message.author.name !== `Bench author ${seq}`) {
      return `endpoint ${e.id} does not show a complete committed update: ${JSON.stringify(rec.meta.message).slice(0, 200)}`;
    }
  }
  return undefined;
}

const startFingerprint = codeFingerprint();

type LoadTarget = Omit<LoadPlan, 'seqFrom'>;

interface Measured {
  figures: LoadFigures;
  warmup: { requests: number; errors: number; non2xx: number };
  server: { peakRssMB?: number; rssMB?: number; cpuPct?: number; cpuUsPerRequest?: number };
  loadGenCpuPct: number;
  otherCpuPct?: number;
  /** The measured window, in seconds from the process's spawn (for its profile). */
  window: { from: number; to: number };
  /** What the server reported of its group commits over the window (SQLite updates). */
  groupCommits?: string;
  /** V8's collections over the window, as the server reported them. */
  collections?: Collections;
}

/** A warm-up, then the measured window: the load's figures, and the CPU of the server, of autocannon and of everything else. */
async function measure(t: Target, load: LoadTarget, warmupS: number, durationS: number): Promise<Measured> {
  const generator = await LoadChild.start({ ...load, seqFrom: updateSeq.next }, ROOT, childEnv({}));
  try {
    return await measureWith(generator, t, warmupS, durationS);
  } finally {
    await generator.stop();
  }
}

async function measureWith(generator: LoadChild, t: Target, warmupS: number, durationS: number): Promise<Measured> {
  const runFor = async (seconds: number) => {
    const run = await generator.run(seconds);
    updateSeq.next = run.nextSeq;
    return run;
  };
  const warm = warmupS > 0 ? (await runFor(warmupS)).figures : { requests: 0, errors: 0, non2xx: 0 };
  // Scraped outside the CPU counters' window, so that rendering the metrics is not counted as load.
  const metrics0 = await scrapeMetrics(t.origin);
  const from = (performance.now() - t.spawnedAt) / 1000;
  const cpu0 = cpuSecondsOf(t.proc.pid);
  const busy0 = machineBusySeconds();
  const wall0 = performance.now();
  const { figures, cpuS: loadGenCpuS } = await runFor(durationS);
  const wallS = (performance.now() - wall0) / 1000;
  const cpu1 = cpuSecondsOf(t.proc.pid);
  const busy1 = machineBusySeconds();
  const metrics1 = metrics0 && (await scrapeMetrics(t.origin));
  // No note without updates in the window (describeGroupCommits), so reads need no case of their own.
  const commits0 = metrics0 && parseGroupCommits(metrics0);
  const commits1 = commits0 && metrics1 && parseGroupCommits(metrics1);
  const groupCommits = commits0 && commits1 && describeGroupCommits(commits0, commits1, wallS);
  const gc0 = metrics0 && parseCollections(metrics0);
  const gc1 = gc0 && metrics1 && parseCollections(metrics1);
  const collections = gc0 && gc1 ? collectionsBetween(gc0, gc1, wallS) : undefined;
  const mem = memoryOf(t.proc.pid);
  const loadGenCpuPct = (loadGenCpuS / wallS) * 100;
  const server: Measured['server'] = {
    ...(mem && { peakRssMB: mem.peakRssMB, rssMB: mem.rssMB }),
    ...(cpu0 !== undefined && cpu1 !== undefined && { cpuPct: ((cpu1 - cpu0) / wallS) * 100 }),
  };
  if (server.cpuPct !== undefined && figures.requests > 0) server.cpuUsPerRequest = ((server.cpuPct / 100) * wallS * 1e6) / figures.requests;
  return {
    figures,
    warmup: { requests: warm.requests, errors: warm.errors, non2xx: warm.non2xx },
    server,
    loadGenCpuPct,
    ...(busy0 !== undefined &&
      busy1 !== undefined &&
      server.cpuPct !== undefined && { otherCpuPct: Math.max(0, ((busy1 - busy0) / wallS) * 100 - server.cpuPct - loadGenCpuPct) }),
    window: { from, to: from + wallS },
    ...(groupCommits && { groupCommits }),
    ...(collections && { collections }),
  };
}

const loadFor = (def: ScenarioDef, t: Target, endpoints: SeedOutput['endpoints']): LoadTarget => ({
  origin: t.origin,
  op: def.op,
  endpoints,
  connections: settings.connections,
});

/** A scenario other than the baseline: its own server process, started now and stopped afterwards. */
async function runScenario(def: ScenarioDef, data: Dataset, recordFile: string): Promise<ScenarioResult> {
  const result: ScenarioResult = { n: def.n, key: def.key, title: def.title, status: 'ok', notes: [] };
  const fingerprint = codeFingerprint();
  result.code = fingerprint;
  if (fingerprint !== startFingerprint) {
    result.notes.push(`THE SERVER CODE CHANGED since the run started (${startFingerprint} -> ${fingerprint}): not comparable with the others`);
  }
  const endpoints = data.seed.endpoints;
  const t = await startTarget(def, data, recordFile);
  try {
    const path = pathsOf(def.op, endpoints, updateSeq);
    await precheck(def, t.origin, path(endpoints.length - 1), data.seed.recordJson, result.notes);
    const m = await measure(t, loadFor(def, t, endpoints), settings.warmupS, settings.durationS);
    result.warmup = m.warmup;
    if (t.profileFile) result.profileWindow = m.window;
    result.figures = m.figures;
    result.loadGenCpuPct = m.loadGenCpuPct;
    result.server = m.server;
    if (m.otherCpuPct !== undefined) result.otherCpuPct = m.otherCpuPct;
    if (m.collections) {
      result.collections = m.collections;
      result.notes.push(describeCollections(m.collections));
    }
    if (m.groupCommits) result.notes.push(m.groupCommits);
    if (def.op === 'update') {
      const problem = await verifyWrites(t.origin, endpoints);
      if (problem) {
        result.status = 'failed';
        result.reason = `writes not verified: ${problem}`;
      } else result.notes.push(`verified: the last updates of ${Math.min(20, endpoints.length)} endpoints read back complete`);
    }
  } catch (err) {
    result.status = 'failed';
    result.reason = err instanceof Error ? err.message : String(err);
  } finally {
    await stopTarget(t, result);
  }
  return result;
}

/** Stops a target's process; how it ended, what it printed and its profile go to `result`. */
async function stopTarget(t: Target, result: ScenarioResult): Promise<void> {
  const end = await stopChild(t.proc, 20_000);
  result.server = { ...result.server, exit: end.killed ? 'killed after 20 s' : end.signal ? `signal ${end.signal}` : `code ${end.code}` };
  if (end.killed || (end.code !== 0 && end.signal === null)) result.notes.push(`server did not stop cleanly (${result.server.exit})`);
  if (t.proc.lines() > 0) {
    const tail = t.proc.output().trim().split('\n').slice(-5).join('\n    ');
    result.notes.push(`server printed ${t.proc.lines()} line(s) at LOG_LEVEL=warn; last:\n    ${tail}`);
  }
  if (t.profileFile) {
    if (existsSync(t.profileFile)) result.profile = relative(ROOT, t.profileFile);
    else result.notes.push(`no profile was written at ${relative(ROOT, t.profileFile)}`);
  }
}

/**
 * The baseline (scenario 1) beside every other scenario. Its server starts at the first run and stays
 * up until finish(): between runs nothing loads it, so it sits idle while the other scenarios are
 * measured (each run records the CPU it used meanwhile, idleCpuS, to show it). Each run warms up for
 * baselineWarmupS (the first for at least warmupS: the process is cold), then is measured like a
 * scenario, for baselineDurationS.
 */
class Baseline {
  readonly runs: BaselineRun[] = [];
  /** The key of the scenario measured since the last baseline run, for the next run's `after`. */
  private lastScenario: string | undefined;
  private target: Target | undefined;
  private startError: string | undefined;
  private cpuAtLastEnd: number | undefined;
  /** With --cpu-prof=baseline: from the first run's window to the last one's. */
  private profileFrom: number | undefined;
  private profileTo: number | undefined;

  private readonly data: Dataset;
  private readonly recordFile: string;

  constructor(data: Dataset, recordFile: string) {
    this.data = data;
    this.recordFile = recordFile;
  }

  /** Measures the baseline now; `before` is the scenario about to be measured (undefined after the last). */
  async run(before: string | undefined): Promise<BaselineRun> {
    const first = this.runs.length === 0;
    const warmupS = first ? Math.max(settings.warmupS, settings.baselineWarmupS) : settings.baselineWarmupS;
    const run: BaselineRun = {
      seq: this.runs.length + 1,
      ...(this.lastScenario !== undefined && { after: this.lastScenario }),
      ...(before !== undefined && { before }),
      status: 'ok',
      warmupS,
      durationS: settings.baselineDurationS,
    };
    this.runs.push(run);
    this.lastScenario = undefined;
    const next = before === undefined ? undefined : SCENARIOS.find((d) => d.key === before);
    log(`Running 1 baseline, run ${run.seq}${next ? `, before ${next.n}` : run.after ? ', after the last scenario' : ''}...`);
    try {
      if (!this.target && this.startError === undefined) {
        try {
          this.target = await startTarget(BASELINE, this.data, this.recordFile);
        } catch (err) {
          this.startError = err instanceof Error ? err.message : String(err);
        }
      }
      if (!this.target) throw new Error(`the baseline server did not start: ${this.startError}`);
      const t = this.target;
      const cpuBefore = cpuSecondsOf(t.proc.pid);
      if (this.cpuAtLastEnd !== undefined && cpuBefore !== undefined) run.idleCpuS = Math.round((cpuBefore - this.cpuAtLastEnd) * 100) / 100;
      const m = await measure(t, loadFor(BASELINE, t, this.data.seed.endpoints), warmupS, settings.baselineDurationS);
      this.cpuAtLastEnd = cpuSecondsOf(t.proc.pid);
      run.figures = m.figures;
      run.warmup = m.warmup;
      run.server = m.server;
      run.loadGenCpuPct = m.loadGenCpuPct;
      if (m.otherCpuPct !== undefined) run.otherCpuPct = m.otherCpuPct;
      if (t.profileFile && first) this.profileFrom = m.window.from;
      if (t.profileFile) this.profileTo = m.window.to;
    } catch (err) {
      run.status = 'failed';
      run.reason = err instanceof Error ? err.message : String(err);
    }
    return run;
  }

  /** Notes that the next baseline run comes right after this scenario. */
  measured(key: string): void {
    this.lastScenario = key;
  }

  /**
   * Stops the server and sums the runs up as scenario 1: req/s, latencies and CPU are medians over
   * the runs, errors and requests are totals, peak RSS is the process's peak.
   */
  async finish(): Promise<ScenarioResult> {
    const title = `${BASELINE.title}, median of ${this.runs.length}`;
    const result: ScenarioResult = { n: BASELINE.n, key: BASELINE.key, title, status: 'ok', notes: [] };
    if (this.target) await stopTarget(this.target, result);
    if (this.profileFrom !== undefined && this.profileTo !== undefined) {
      result.profileWindow = { from: this.profileFrom, to: this.profileTo };
      result.notes.push('the profile spans every baseline run, and the idle time between them');
    }
    const done = this.runs.filter((r) => r.figures);
    const failures = this.runs.filter((r) => r.status === 'failed');
    if (done.length === 0) {
      result.status = 'failed';
      result.reason = failures[0]?.reason ?? this.startError ?? 'the baseline did not run';
      return result;
    }
    if (failures.length > 0) {
      result.status = 'failed';
      result.reason = `baseline run(s) ${failures.map((r) => r.seq).join(', ')} failed: ${failures[0]!.reason}`;
    }
    const med = (pick: (r: BaselineRun) => number | undefined) => {
      const values = done.map(pick).filter((v): v is number => v !== undefined && Number.isFinite(v));
      return values.length ? median(values) : undefined;
    };
    const figs = done.map((r) => r.figures!);
    const statusCodes: Record<string, number> = {};
    for (const f of figs) for (const [code, count] of Object.entries(f.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + count;
    const sum = (pick: (f: LoadFigures) => number) => figs.reduce((a, f) => a + pick(f), 0);
    result.figures = {
      requestsPerSec: med((r) => r.figures!.requestsPerSec)!,
      requests: sum((f) => f.requests),
      durationS: sum((f) => f.durationS),
      p50Ms: med((r) => r.figures!.p50Ms) ?? NaN,
      p90Ms: med((r) => r.figures!.p90Ms) ?? NaN,
      p99Ms: med((r) => r.figures!.p99Ms) ?? NaN,
      maxMs: Math.max(...figs.map((f) => f.maxMs)),
      errors: sum((f) => f.errors),
      timeouts: sum((f) => f.timeouts),
      non2xx: sum((f) => f.non2xx),
      statusCodes,
      errorSamples: [...new Set(figs.flatMap((f) => f.errorSamples))].slice(0, 5),
      throughputMBps: med((r) => r.figures!.throughputMBps) ?? NaN,
    };
    result.warmup = {
      requests: done.reduce((a, r) => a + (r.warmup?.requests ?? 0), 0),
      errors: done.reduce((a, r) => a + (r.warmup?.errors ?? 0), 0),
      non2xx: done.reduce((a, r) => a + (r.warmup?.non2xx ?? 0), 0),
    };
    const peaks = done.flatMap((r) => (r.server?.peakRssMB === undefined ? [] : [r.server.peakRssMB]));
    const cpuPct = med((r) => r.server?.cpuPct);
    const cpuUs = med((r) => r.server?.cpuUsPerRequest);
    const rss = done.at(-1)!.server?.rssMB;
    result.server = {
      ...result.server,
      ...(peaks.length && { peakRssMB: Math.max(...peaks) }),
      ...(rss !== undefined && { rssMB: rss }),
      ...(cpuPct !== undefined && { cpuPct }),
      ...(cpuUs !== undefined && { cpuUsPerRequest: cpuUs }),
    };
    const loadGen = med((r) => r.loadGenCpuPct);
    if (loadGen !== undefined) result.loadGenCpuPct = loadGen;
    const other = med((r) => r.otherCpuPct);
    if (other !== undefined) result.otherCpuPct = other;
    const idle = done.reduce((a, r) => a + (r.idleCpuS ?? 0), 0);
    const between = done.filter((r) => r.idleCpuS !== undefined).length;
    if (between > 0 && idle > 0.05 * between) {
      result.notes.push(`the baseline server used ${idle.toFixed(2)} s of CPU between its runs, while it should have been idle`);
    }
    return result;
  }
}

const skipped = (def: ScenarioDef, reason: string): ScenarioResult => ({
  n: def.n,
  key: def.key,
  title: def.title,
  status: 'skipped',
  reason,
  notes: [],
});

const failed = (def: ScenarioDef, reason: string): ScenarioResult => ({ ...skipped(def, reason), status: 'failed' });

// ---------------------------------------------------------------------------------------------
// PostgreSQL: only when DATABASE_URL is set and the server itself accepts CHATBRIDGE_STORE=postgres.

const PG_UNAVAILABLE = 'postgres store not available';

interface Postgres {
  /** The seeded store, or the results to report instead of running 4 and 5 (skipped or failed). */
  data?: Dataset;
  instead?: ScenarioResult[];
  /** Deletes this run's rows; call once when the scenarios are done. */
  cleanup: () => Promise<void>;
}

/** VACUUM ANALYZE of chatbridge's tables (bench/lib/vacuum.ts: dead rows of earlier runs are not measured). */
const vacuum = async (when: string) => log(await vacuumAndReport(process.env.DATABASE_URL!, ROOT, when));

/** Probes and seeds PostgreSQL before the measured scenarios, so that those run back to back. */
async function preparePostgres(defs: ScenarioDef[], recordFile: string, dir: string): Promise<Postgres> {
  const none = async () => {};
  if (!process.env.DATABASE_URL) return { instead: defs.map((d) => skipped(d, `${PG_UNAVAILABLE} (DATABASE_URL is not set)`)), cleanup: none };
  const storeEnv = postgresEnv();
  const probeData: Dataset = { storeEnv, seed: { store: 'postgres', count: 0, viaStore: 0, seconds: 0, recordJson: '', endpoints: [] } };
  log('  probing: does the server start with CHATBRIDGE_STORE=postgres?');
  try {
    const probe = await startTarget({ ...defs[0]!, n: 0 }, probeData, recordFile, 20_000);
    await stopChild(probe.proc, 20_000);
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).split('\n').slice(1).join(' ').trim().slice(0, 300);
    return {
      instead: defs.map((d) => skipped(d, `${PG_UNAVAILABLE} (the server did not start with CHATBRIDGE_STORE=postgres${why ? `: ${why}` : ''})`)),
      cleanup: none,
    };
  }
  // A shared database: this run's endpoints carry a unique prefix and are deleted afterwards.
  const prefix = `bench-${runId}-`;
  const removeRows = () => deleteSeededRows(prefix, childEnv(storeEnv), ROOT);
  const unregister = onInterrupt(removeRows);
  const cleanup = async () => {
    unregister();
    await removeRows();
    await vacuum('after deleting this run\'s rows');
  };
  try {
    const data = await seed('postgres', storeEnv, settings.smallEndpoints, settings.smallEndpoints, prefix, dir);
    await vacuum('before the PostgreSQL scenarios');
    return { data, cleanup };
  } catch (err) {
    return { instead: defs.map((d) => failed(d, err instanceof Error ? err.message : String(err))), cleanup };
  }
}

// ---------------------------------------------------------------------------------------------
// Report

function printTable(results: ScenarioResult[]): void {
  const head =
    ` #  ${'scenario'.padEnd(40)} ${'req/s'.padStart(8)} ${'x base'.padStart(6)} ${'base r/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ` +
    `${'errors'.padStart(6)} ${'non-2xx'.padStart(7)} ${'peak RSS'.padStart(9)} ${'us/req'.padStart(6)} ${'server'.padStart(7)} ${'autocan'.padStart(7)} ${'other'.padStart(6)}`;
  log(head);
  log('-'.repeat(head.length));
  for (const r of results) {
    const label = `${r.title}${r.profile ? ' (profiled)' : ''}`.padEnd(40);
    if (!r.figures) {
      log(`${tagOf(r).padStart(2)}  ${label} ${r.status}: ${r.reason ?? ''}`);
      continue;
    }
    const f = r.figures;
    const bad = f.errors + f.non2xx + (r.warmup?.errors ?? 0) + (r.warmup?.non2xx ?? 0) > 0;
    log(
      `${tagOf(r).padStart(2)}  ${label} ${fmtInt(f.requestsPerSec).padStart(8)} ${(r.ratioToBaseline === undefined ? '-' : r.ratioToBaseline.toFixed(2)).padStart(6)} ` +
        `${(r.baselineRequestsPerSec === undefined ? '-' : fmtInt(r.baselineRequestsPerSec)).padStart(8)} ` +
        `${f.p50Ms.toFixed(2).padStart(7)} ${f.p99Ms.toFixed(2).padStart(7)} ${String(f.errors).padStart(6)} ${String(f.non2xx).padStart(7)} ` +
        `${(r.server?.peakRssMB === undefined ? '-' : `${r.server.peakRssMB.toFixed(0)} MB`).padStart(9)} ` +
        `${(r.server?.cpuUsPerRequest === undefined ? '-' : r.server.cpuUsPerRequest.toFixed(0)).padStart(6)} ` +
        `${(r.server?.cpuPct === undefined ? '-' : `${r.server.cpuPct.toFixed(0)}%`).padStart(7)} ${`${(r.loadGenCpuPct ?? 0).toFixed(0)}%`.padStart(7)} ` +
        `${(r.otherCpuPct === undefined ? '-' : `${r.otherCpuPct.toFixed(0)}%`).padStart(6)}` +
        (bad ? '   <<< ERRORS / NON-2XX' : '') +
        (r.status === 'failed' ? `   <<< FAILED: ${r.reason}` : ''),
    );
  }
}

function printProblems(results: ScenarioResult[]): boolean {
  let bad = false;
  for (const r of results) {
    if (r.status === 'failed') {
      bad = true;
      log(`\n!!! scenario ${tagOf(r)} (${r.key}) FAILED: ${r.reason}`);
    }
    const f = r.figures;
    const w = r.warmup;
    if (f && f.errors + f.non2xx > 0) {
      bad = true;
      log(`\n!!! scenario ${tagOf(r)} (${r.key}): ${f.errors} errors (${f.timeouts} timeouts), ${f.non2xx} non-2xx answers; status codes ${JSON.stringify(f.statusCodes)}`);
      for (const e of f.errorSamples) log(`      ${e}`);
    }
    if (w && w.errors + w.non2xx > 0) {
      bad = true;
      log(`\n!!! scenario ${tagOf(r)} (${r.key}) warm-up: ${w.errors} errors, ${w.non2xx} non-2xx answers`);
    }
  }
  return bad;
}

function printTargets(checks: TargetCheck[]): void {
  log(`\nTargets (informational${mode === 'quick' ? '; quick run: short durations and a smaller store, indicative only' : ''}):`);
  for (const c of checks) {
    log(`  ${c.status.padEnd(4)}  ${c.description.padEnd(62)} ${c.target.padEnd(18)} ${c.status === 'SKIP' ? `(${c.reason})` : c.actual}`);
  }
}

function gitInfo(): { commit?: string; dirty?: boolean; source?: string } {
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  const status = spawnSync('git', ['status', '--porcelain', '--', 'packages', 'openapi'], { cwd: ROOT, encoding: 'utf8' });
  if (head.status === 0) return { commit: head.stdout.trim(), dirty: status.stdout.trim().length > 0 };
  // A copy outside a checkout (say, `git archive` of a commit) may say what it is.
  return process.env.BENCH_SOURCE ? { source: process.env.BENCH_SOURCE } : {};
}

/**
 * A digest of the code the server runs (its sources, the bundled spec, package manifests). Every
 * scenario starts a new server process: if someone edits the tree during a run, scenarios measure
 * different code, and the report says so.
 */
function codeFingerprint(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (name === 'node_modules' || name === 'dist' || name === 'test' || name.startsWith('.')) continue;
      const path = join(dir, name);
      const st = statSync(path);
      if (st.isDirectory()) walk(path);
      else if (/\.(ts|js|json|ya?ml|sql)$/.test(name)) hash.update(`${relative(ROOT, path)}\0`).update(readFileSync(path));
    }
  };
  for (const dir of ['packages/server', 'packages/api']) if (existsSync(join(ROOT, dir))) walk(join(ROOT, dir));
  return hash.digest('hex').slice(0, 16);
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<number> {
  installCleanup();
  const startedAt = new Date();
  const load0 = os.loadavg();
  const dir = makeTempDir('chatbridge-bench-');
  const chosen = ORDER.map((n) => SCENARIOS.find((s) => s.n === n)!).filter((d) => selected.has(d.n));
  log(
    `chatbridge bench (${mode}${profiled.size ? ', profiling' : ''}): ${settings.connections} connections, ${settings.durationS} s per scenario after ${settings.warmupS} s warm-up; ` +
      `Node ${process.version}, ${os.cpus().length} CPUs, load average ${load0.map((l) => l.toFixed(2)).join(' ')}`,
  );

  const results: ScenarioResult[] = [];
  /** What ran, in order ('1' for each baseline run). */
  const sequence: string[] = [];
  let baseline: Baseline | undefined;
  let pg: Postgres | undefined;
  try {
    // The server as `pnpm start` runs it: compiled. Then the stores, so that the measured scenarios
    // run back to back.
    buildServer(ROOT);
    log('Seeding...');
    const smallEnv = { CHATBRIDGE_STORE: 'sqlite', CHATBRIDGE_SQLITE_PATH: join(dir, 'small.sqlite') };
    const small = await seed('small', smallEnv, settings.smallEndpoints, settings.smallEndpoints, 'bench-', dir);
    const recordFile = join(dir, 'record.json');
    writeFileSync(recordFile, small.seed.recordJson);
    log(`  one record is ${Buffer.byteLength(small.seed.recordJson)} bytes of JSON (the baseline answers with the same bytes)`);
    const large = chosen.some((d) => d.target === 'sqlite-large')
      ? await seed(
          'large',
          { CHATBRIDGE_STORE: 'sqlite', CHATBRIDGE_SQLITE_PATH: join(dir, 'large.sqlite') },
          settings.largeEndpoints,
          settings.largeSampled,
          'bench-',
          dir,
        )
      : undefined;

    const pgDefs = chosen.filter((d) => d.target === 'postgres');
    if (pgDefs.length > 0 && !isInterrupted()) {
      log(`Preparing ${pgDefs.map((d) => d.n).join(', ')} (PostgreSQL)...`);
      pg = await preparePostgres(pgDefs, recordFile, dir);
      if (pg.instead) results.push(...pg.instead);
    }

    // The measured scenarios back to back, the baseline before each and after the last: 1 7 1 2 ... 5 1.
    if (bracketed) baseline = new Baseline(small, recordFile);
    for (const def of chosen.filter((d) => d.n !== BASELINE.n && (d.target !== 'postgres' || pg?.data))) {
      if (isInterrupted()) break;
      if (baseline) {
        await baseline.run(def.key);
        sequence.push(tagOf(BASELINE));
        if (isInterrupted()) break;
      }
      log(`Running ${def.n} ${def.title}...`);
      const data = def.target === 'sqlite-large' ? large! : def.target === 'postgres' ? pg!.data! : small;
      results.push(await runScenario(def, data, recordFile));
      sequence.push(tagOf(def));
      baseline?.measured(def.key);
    }
    if (baseline && !isInterrupted()) {
      await baseline.run(undefined);
      sequence.push(tagOf(BASELINE));
    }
  } finally {
    if (baseline) results.push(await baseline.finish());
    await pg?.cleanup();
    removeTempDir(dir);
  }
  if (isInterrupted()) return 130; // no report from a partial run

  results.sort((a, b) => a.n - b.n);
  // Each scenario's ratio is over its adjacent baselines: the mean of the runs right before and right after it.
  const runs = baseline?.runs ?? [];
  const measuredRuns = runs.filter((r) => r.figures);
  const rpsOf = (r: BaselineRun | undefined) => r?.figures?.requestsPerSec;
  const overall = measuredRuns.length ? median(measuredRuns.map((r) => r.figures!.requestsPerSec)) : undefined;
  const driftPct = measuredRuns.length >= 2 ? ((rpsOf(measuredRuns.at(-1))! - rpsOf(measuredRuns[0])!) / rpsOf(measuredRuns[0])!) * 100 : undefined;
  let noisy = 0;
  for (const r of results) {
    if (!r.figures || overall === undefined) continue;
    if (r.key === BASELINE.key) {
      r.baselineRequestsPerSec = overall;
      r.ratioToBaseline = r.figures.requestsPerSec / overall;
      continue;
    }
    const before = runs.find((b) => b.before === r.key && b.figures);
    const after = runs.find((b) => b.after === r.key && b.figures);
    const adjacent = [before, after].filter((b): b is BaselineRun => b !== undefined);
    if (adjacent.length === 0) {
      r.baselineRequestsPerSec = overall;
      r.notes.push('no baseline run beside it succeeded: its ratio is over the median of all the baseline runs');
    } else {
      r.baselineRequestsPerSec = adjacent.reduce((a, b) => a + rpsOf(b)!, 0) / adjacent.length;
      r.baselineAdjacent = { ...(before && { before: rpsOf(before)! }), ...(after && { after: rpsOf(after)! }), seq: adjacent.map((b) => b.seq) };
    }
    r.ratioToBaseline = r.figures.requestsPerSec / r.baselineRequestsPerSec;
    if (before && after) {
      const moved = ((rpsOf(after)! - rpsOf(before)!) / rpsOf(before)!) * 100;
      if (Math.abs(moved) > 15) {
        noisy++;
        r.notes.push(`the baseline moved ${signed(moved)}% from right before it to right after it: the machine was noisy, its ratio is unreliable`);
      }
    }
  }
  const checks = checkTargets(results);
  const finishedAt = new Date();

  log('');
  printTable(results);
  log(
    `    x base: req/s over base r/s, the baseline measured right before and right after the scenario (their mean); row 1: the median of all its runs.\n` +
      `    us/req: server CPU time per request (steadier than req/s on a busy machine).\n` +
      `    server, autocan, other: CPU during the measured window, % of one core, for the server, autocannon and every other process.`,
  );
  if (measuredRuns.length > 0) {
    const seq = runs.map((b) => `${b.figures ? fmtInt(b.figures.requestsPerSec) : b.status}${b.before ? ` [${SCENARIOS.find((d) => d.key === b.before)!.n}]` : ''}`);
    const each =
      settings.baselineWarmupS > 0
        ? `${settings.baselineDurationS} s after ${settings.baselineWarmupS} s warm-up`
        : `${settings.baselineDurationS} s, without a warm-up after the first run's`;
    log(`  baseline runs (${each}; [n]: the scenario measured next): ${seq.join(' ')}`);
    const rps = measuredRuns.map((b) => b.figures!.requestsPerSec);
    if (overall !== undefined && rps.length >= 2) {
      const spread = ((Math.max(...rps) - Math.min(...rps)) / overall) * 100;
      log(
        `  baseline moved ${signed(driftPct!)}% from its first run to its last, and spread over ${spread.toFixed(0)}% of its median` +
          (noisy > 0 ? `; ${noisy} scenario(s) saw it move more than 15% between their own two runs: see their notes` : ''),
      );
    }
  }
  for (const r of results) for (const note of r.notes) log(`  note ${tagOf(r)}: ${note}`);
  const bad = printProblems(results);
  if (profiled.size === 0) printTargets(checks);
  else log('\nTargets not checked: the server ran under --cpu-prof.');

  const report = {
    schema: 1,
    tool: 'chatbridge bench (autocannon)',
    mode,
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    git: gitInfo(),
    code: { atStart: startFingerprint, changedDuringRun: results.some((r) => r.code !== undefined && r.code !== startFingerprint) },
    machine: {
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryGB: Math.round(os.totalmem() / 1e9),
      loadAverageBefore: load0,
      loadAverageAfter: os.loadavg(),
    },
    settings: {
      ...settings,
      order: sequence,
      profiled: [...profiled],
      databaseUrlSet: Boolean(process.env.DATABASE_URL),
    },
    ok: !bad,
    /**
     * requestsPerSec: the median of the baseline's runs (scenario 1's figure); each scenario's ratio is
     * over its own adjacent runs (scenarios[].baselineRequestsPerSec). Older reports, without `ratios`,
     * took every ratio over requestsPerSec, the mean of the two runs in `runs` (start and end).
     */
    baseline: {
      requestsPerSec: overall ?? null,
      runs: measuredRuns.map((b) => b.figures!.requestsPerSec),
      driftPct: driftPct ?? null,
      ratios: 'adjacent',
      measurements: runs,
    },
    scenarios: results,
    targets: checks,
  };
  mkdirSync(RESULTS, { recursive: true });
  const suffix = profiled.size ? '-profile' : mode === 'quick' ? '-quick' : complete ? '' : '-partial';
  const file = join(RESULTS, `${stamp}${suffix}.json`);
  const json = `${JSON.stringify(report, null, 2)}\n`;
  writeFileSync(file, json);
  const written = [relative(ROOT, file)];
  if (profiled.size === 0 && (complete || mode === 'quick')) {
    const latest = mode === 'quick' ? 'latest-quick' : 'latest';
    const svg = barChart(
      `chatbridge: requests/s per scenario (${mode} run)`,
      `${settings.connections} connections, ${settings.durationS} s after ${settings.warmupS} s warm-up, the baseline ${settings.baselineDurationS} s beside each · Node ${process.version} · ${os.cpus().length} CPUs · ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
      `Bars: requests/s, higher is better. ×: ratio to the baseline measured right before and after each scenario (the req/s after "of"); 1: median of its ${measuredRuns.length} runs.`,
      results.map((r) => ({
        label: `${tagOf(r)} ${r.title}`,
        ...(r.figures && { value: r.figures.requestsPerSec }),
        ...(r.ratioToBaseline !== undefined && {
          note:
            `${r.ratioToBaseline.toFixed(2)}×${r.key === BASELINE.key || r.baselineRequestsPerSec === undefined ? '' : ` of ${fmtInt(r.baselineRequestsPerSec)}`} · p99 ${r.figures!.p99Ms.toFixed(1)} ms` +
            (r.server?.cpuUsPerRequest === undefined ? '' : ` · ${r.server.cpuUsPerRequest.toFixed(0)} µs CPU/req`),
        }),
        ...(!r.figures && { missing: `${r.status}: ${r.reason ?? ''}`.slice(0, 90) }),
        warn: r.status === 'failed' || (r.figures !== undefined && r.figures.errors + r.figures.non2xx > 0),
      })),
    );
    writeFileSync(join(RESULTS, `${latest}.json`), json);
    writeFileSync(join(RESULTS, `${latest}.svg`), svg);
    written.push(`bench/results/${latest}.json`, `bench/results/${latest}.svg`);
  }
  log(`\nWrote ${written.join(', ')}`);

  for (const r of results) {
    if (!r.profile) continue;
    const w = r.profileWindow;
    const summary = formatSummary(summarizeProfile(join(ROOT, r.profile), w ? { fromMs: w.from * 1000, toMs: w.to * 1000 } : {}), 25);
    writeFileSync(join(ROOT, r.profile.replace(/\.cpuprofile$/, '.txt')), `${summary}\n`);
    log(`\nProfile of scenario ${r.n} (${r.key}), measured window only:\n${summary}`);
    if (w) log(`  (the same: pnpm exec node bench/profile-summary.ts ${r.profile} --from ${w.from.toFixed(1)} --to ${w.to.toFixed(1)})`);
  }
  log(`\nfinished in ${((finishedAt.getTime() - startedAt.getTime()) / 1000).toFixed(0)} s${bad ? ': ERRORS OR NON-2XX ANSWERS, see above' : ''}`);
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
