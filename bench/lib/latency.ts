// The latency scenarios: update → event (or webhook request) on one machine clock, with the load
// generators (bench/latency-child.ts: the streams, the webhook receiver, the triggers) in processes
// of their own. run.ts seeds the store and starts the servers through `Harness`.
import { join } from 'node:path';
import { cpuSecondsOf, freePort, ipcChild, peakRssMB, rssMB, type Spawned, spawnTracked, stopChild, waitUntilServing } from './procs.ts';

export interface LatencySpec {
  kind: 'streams' | 'bot' | 'cross' | 'webhooks';
  endpoints: number;
  /** Streams per endpoint ('streams', 'cross'), or bot streams ('bot'); webhooks per endpoint ('webhooks'). */
  fanOut: number;
  ratePerSec: number;
  durationS: number;
  warmupS: number;
  p99Ms: number;
  rssMB?: number;
  /** Streams: also measure the bare node:http SSE broadcaster at the same streams and rate. */
  bare?: boolean;
}

export interface LatencyFigures {
  triggers: number;
  triggersPerSec: number;
  triggerStatuses: Record<string, number>;
  expected: number;
  received: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Streams the server ended during the run (none expected). Webhooks: distinct Idempotency-Keys, and keys received more than once. */
  closed?: number;
  keys?: number;
  duplicated?: number;
  /** Of the server(s) during the measured window: peak RSS (the largest), CPU in % of one core (summed). */
  peakRssMB?: number;
  cpuPct?: number;
  /** Streams: the growth of the streams' server's resident set, from before they opened to its peak, per stream. */
  kbPerStream?: number;
  /** The fan-out scenarios: the same streams and triggers against a bare node:http SSE broadcaster. */
  bare?: LatencyFigures;
}

/** What the harness provides: the seeded endpoints and the servers of one scenario. */
export interface Harness {
  root: string;
  env: NodeJS.ProcessEnv;
  seed(args: string[]): Promise<{ id: string; token: string }[]>;
  /** Starts `count` servers on the scenario's store, with `env` added; the last (the streams' one) profiled if asked. */
  servers(count: number, env: Record<string, string>): Promise<{ proc: Spawned; origin: string }[]>;
  adminToken: string;
}

/** The server settings of every latency scenario, printed with its results. */
export const LATENCY_SERVER_ENV = {
  CHATBRIDGE_MAX_CONNECTIONS: '50000',
  CHATBRIDGE_MAX_CONNECTIONS_PER_ADDRESS: '0',
  CHATBRIDGE_RATE_LIMIT_PER_ENDPOINT: '0',
  // No message expires during a run: an expiry is a change of its own, not a trigger.
  CHATBRIDGE_MESSAGE_TTL_SECONDS: '600',
};

const roleChild = (h: Harness, role: string) => ipcChild(`latency ${role}`, [join(h.root, 'bench/latency-child.ts'), role], h.env, h.root);
type Child = ReturnType<typeof roleChild>;

/** Runs one scenario; a string when it cannot run on this server (skipped). */
export async function runLatency(spec: LatencySpec, h: Harness, log: (line: string) => void): Promise<LatencyFigures | string> {
  const children: Child[] = [];
  try {
    const receiver = roleChild(h, spec.kind === 'webhooks' ? 'webhooks' : 'streams');
    children.push(receiver);
    const hookPort = spec.kind === 'webhooks' ? (await receiver.next<{ port: number }>()).port : undefined;
    const relay = hookPort ? ['--webhooks', `http://127.0.0.1:${hookPort}`] : ['--no-relay'];
    const endpoints = await h.seed(['--count', String(spec.endpoints), ...relay]);
    const env = {
      ...LATENCY_SERVER_ENV,
      ...(hookPort && { CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE: 'true' }),
      ...(spec.kind === 'bot' && { CHATBRIDGE_ADMIN_TOKEN: h.adminToken }),
    };
    const servers = await h.servers(spec.kind === 'cross' ? 2 : 1, env);
    const [sendTo, listenOn] = [servers[0]!.origin, servers.at(-1)!.origin];
    const bot = spec.kind === 'bot' ? { key: await botKey(sendTo, h.adminToken), count: spec.fanOut } : undefined;
    const procs = servers.map((s) => s.proc);
    const ours = await drive(spec, h, log, { receiver, children, sendTo, listenOn, endpoints, bot, procs });
    if (spec.kind === 'webhooks' || !spec.bare) return ours;
    // The streams' connections close before the baseline opens as many.
    await Promise.all(children.splice(0).map((c) => c.stop()));
    return { ...ours, bare: await bareBroadcaster(spec, h, log, endpoints, bot) };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
  }
}

interface Drive {
  receiver: Child;
  /** Where the trigger sender is added, to be stopped with the rest. */
  children: Child[];
  sendTo: string;
  listenOn: string;
  endpoints: { id: string; token: string }[];
  bot: { key: string; count: number } | undefined;
  /** The server process(es): CPU summed, RSS the largest; the last one holds the streams. */
  procs: Spawned[];
}

/** Opens the streams (not for webhooks), sends the warm-up and the measured triggers, and collects. */
async function drive(spec: LatencySpec, h: Harness, log: (line: string) => void, t: Drive): Promise<LatencyFigures> {
  const holder = t.procs.at(-1)!;
  const rss0 = rssMB(holder.pid);
  let streams: number | undefined;
  if (spec.kind !== 'webhooks') {
    const t0 = performance.now();
    const opened = await t.receiver.ask<{ opened: number; refused: Record<string, number> }>({
      open: { origin: t.listenOn, endpoints: t.endpoints, perEndpoint: spec.fanOut, bot: t.bot },
    });
    const refusals = Object.entries(opened.refused);
    if (refusals.length > 0) throw new Error(`streams refused: ${JSON.stringify(opened.refused)} of ${opened.opened}`);
    streams = opened.opened;
    log(`  ${opened.opened} streams open on ${t.listenOn} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  const sender = roleChild(h, 'triggers');
  t.children.push(sender);
  type Ran = { sent: number; perSec: number; ok: number; statuses: Record<string, number> };
  const trigger = (durationS: number) =>
    sender.ask<Ran>({ run: { origin: t.sendTo, endpoints: t.endpoints, ratePerSec: spec.ratePerSec, durationS } });
  const fanOut = (ran: Ran) => ran.ok * spec.fanOut;
  if (spec.warmupS > 0) await t.receiver.ask({ collect: { expected: fanOut(await trigger(spec.warmupS)), quietMs: 2_000, reset: true } });
  const cpu0 = t.procs.map((p) => cpuSecondsOf(p.pid) ?? NaN);
  const wall0 = performance.now();
  const ran = await trigger(spec.durationS);
  const cpuS = t.procs.reduce((sum, p, i) => sum + (cpuSecondsOf(p.pid) ?? NaN) - cpu0[i]!, 0);
  const cpuPct = (cpuS / ((performance.now() - wall0) / 1000)) * 100;
  const got = await t.receiver.ask<Omit<LatencyFigures, 'triggers' | 'expected'>>({ collect: { expected: fanOut(ran), quietMs: 5_000 } });
  const rss = Math.max(...t.procs.map((p) => peakRssMB(p.pid) ?? NaN));
  // Memory per stream: what the process holding the streams grew by, from before they opened to its
  // peak; not for a handful of streams, where that growth is the process's own, not theirs.
  const kbPerStream = streams && streams >= 100 && rss0 !== undefined ? (((peakRssMB(holder.pid) ?? NaN) - rss0) * 1000) / streams : NaN;
  const server = {
    ...(Number.isFinite(rss) && { peakRssMB: rss }),
    ...(Number.isFinite(cpuPct) && { cpuPct }),
    ...(Number.isFinite(kbPerStream) && { kbPerStream }),
  };
  return { ...got, ...server, triggers: ran.sent, triggersPerSec: ran.perSec, triggerStatuses: ran.statuses, expected: fanOut(ran) };
}

/** The same streams and triggers against the bare node:http broadcaster (bench/sse-broadcaster.ts). */
async function bareBroadcaster(
  spec: LatencySpec,
  h: Harness,
  log: (line: string) => void,
  endpoints: { id: string; token: string }[],
  bot: { key: string; count: number } | undefined,
): Promise<LatencyFigures> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const proc = spawnTracked('sse broadcaster', [join(h.root, 'bench/sse-broadcaster.ts')], { ...h.env, PORT: String(port) }, h.root);
  const children: Child[] = [];
  try {
    await waitUntilServing(`${origin}/`, proc, 10_000);
    log('  the same against a bare node:http SSE broadcaster:');
    const receiver = roleChild(h, 'streams');
    children.push(receiver);
    return await drive(spec, h, log, { receiver, children, sendTo: origin, listenOn: origin, endpoints, bot, procs: [proc] });
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await stopChild(proc, 2_000);
  }
}

/** The scenario's verdict against its targets: every event delivered (or one receipt per key), p99, RSS. */
export function latencyVerdict(spec: LatencySpec, f: LatencyFigures): { pass: boolean; text: string } {
  const delivered = spec.kind === 'webhooks' ? f.duplicated === 0 && f.keys === f.received : f.received === f.expected;
  const checks = [
    [delivered, spec.kind === 'webhooks' ? `one receipt per key (${f.duplicated} twice)` : `all delivered (${f.received}/${f.expected})`],
    [f.p99Ms <= spec.p99Ms, `p99 ${f.p99Ms.toFixed(1)} <= ${spec.p99Ms} ms`],
    ...(spec.rssMB ? [[(f.peakRssMB ?? Infinity) <= spec.rssMB, `RSS ${f.peakRssMB?.toFixed(0)} <= ${spec.rssMB} MB`] as const] : []),
  ] as const;
  return { pass: checks.every(([ok]) => ok), text: checks.map(([ok, what]) => `${ok ? 'PASS' : 'FAIL'} ${what}`).join('; ') };
}

/** A chat_d bot's key, created through the admin API: the bot streams follow GET /events with it. */
async function botKey(origin: string, adminToken: string): Promise<string> {
  const headers = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const res = await fetch(`${origin}/admin/bots`, { method: 'POST', headers, body: '{"id":"bench-bot","platform":"chat_d"}' });
  if (res.status !== 201) throw new Error(`creating the bench's bot: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { key: string }).key;
}
