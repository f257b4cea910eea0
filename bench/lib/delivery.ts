// The delivery scenario: messages from chat_c to `selfuse` endpoints whose chat_a webhooks (and one
// rate-limited chat_b webhook) are local receivers, each message followed from its acceptance (the
// 200 of updateEndpoint) to its arrival at every webhook it is due at; then the same messages through
// a bare node:http relay (bench/relay-baseline.ts) to the same receivers. The processes:
// bench/delivery-child.ts (the receivers, the message sender). run.ts seeds and starts the server.
import { join } from 'node:path';
import { type Harness, LATENCY_SERVER_ENV } from './latency.ts';
import { cpuSecondsOf, freePort, ipcChild, peakRssMB, type Spawned, spawnTracked, stopChild, waitUntilServing } from './procs.ts';

export interface DeliverySpec {
  endpoints: number;
  /** Messages per second in all, `limitedPerSec` of them to the endpoint with the rate-limited webhook. */
  ratePerSec: number;
  limitedPerSec: number;
  durationS: number;
  /** After the last message: wait until every delivery arrived, or none for `quietMs`, at most `maxWaitMs`. */
  quietMs: number;
  maxWaitMs: number;
}

export interface DeliveryFigures {
  sent: number;
  perSec: number;
  statuses: Record<string, number>;
  /** Deliveries due: one per accepted message and webhook of its endpoint. */
  expected: number;
  /** Due deliveries that arrived (first receipt of each). */
  delivered: number;
  missing: number;
  /** Receipts beyond the first of a message at a webhook. */
  duplicates: number;
  /** First receipts at a webhook of a message numbered below one it had already received. */
  outOfOrder: number;
  /** The rate-limited webhook: deliveries due, arrived, and posts it refused with 429. */
  limited: { expected: number; delivered: number; refused: number };
  /** Acceptance → first receipt, over every delivered message and webhook. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  peakRssMB?: number;
  cpuPct?: number;
}

export interface DeliveryResult {
  ours: DeliveryFigures;
  bare: DeliveryFigures;
}

const child = (h: Harness, role: string) => ipcChild(`delivery ${role}`, [join(h.root, 'bench/delivery-child.ts'), role], h.env, h.root);
type Child = ReturnType<typeof child>;
type Receipt = [string, number, number];
type Accepted = [number, number, number | null, number];
type Sent = { sent: number; perSec: number; statuses: Record<string, number>; accepted: Accepted[] };

/** Runs chatbridge, then the bare relay, against the same receivers, load and endpoints. */
export async function runDelivery(spec: DeliverySpec, h: Harness, log: (line: string) => void): Promise<DeliveryResult> {
  const children: Child[] = [];
  let relay: Spawned | undefined;
  try {
    const hooks = child(h, 'hooks');
    children.push(hooks);
    const hookOrigin = `http://127.0.0.1:${(await hooks.next<{ port: number }>()).port}`;
    const endpoints = await h.seed(['--count', String(spec.endpoints), '--delivery', hookOrigin]);
    const [server] = await h.servers(1, { ...LATENCY_SERVER_ENV, CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE: 'true' });
    // Endpoint 0 also bridges chat_b, whose webhook rate-limits (a webhook URL has at least 50 characters).
    const limitedHook = `${hookOrigin}/limited/${'x'.repeat(40)}`;
    const e0 = endpoints[0]!;
    const configured = await fetch(
      `${server!.origin}/update/${e0.id}?token=${e0.token}&channel_chat_b=channel-b-1&webhook_chat_b=${encodeURIComponent(limitedHook)}`,
      { method: 'POST' },
    );
    if (configured.status !== 200) throw new Error(`configuring the rate-limited webhook: ${configured.status} ${await configured.text()}`);
    const ours = await measure(spec, h, hooks, server!.origin, [server!.proc], endpoints, children);
    log(`  chatbridge: ${ours.delivered}/${ours.expected} deliveries; then the bare node:http relay`);

    const port = await freePort();
    const env = { ...h.env, PORT: String(port), HOOKS: hookOrigin, LIMITED: e0.id };
    relay = spawnTracked('bare relay', [join(h.root, 'bench/relay-baseline.ts')], env, h.root);
    await waitUntilServing(`http://127.0.0.1:${port}/`, relay, 10_000);
    const bare = await measure(spec, h, hooks, `http://127.0.0.1:${port}`, [relay], endpoints, children);
    return { ours, bare };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    if (relay) await stopChild(relay, 2_000);
  }
}

async function measure(
  spec: DeliverySpec,
  h: Harness,
  hooks: Child,
  origin: string,
  procs: Spawned[],
  endpoints: { id: string; token: string }[],
  children: Child[],
): Promise<DeliveryFigures> {
  const sender = child(h, 'messages');
  children.push(sender);
  const cpu0 = procs.map((p) => cpuSecondsOf(p.pid) ?? NaN);
  const wall0 = performance.now();
  const run = {
    origin,
    endpoints,
    ratePerSec: spec.ratePerSec - spec.limitedPerSec,
    limitedPerSec: spec.limitedPerSec,
    durationS: spec.durationS,
  };
  const ran = await sender.ask<Sent>({ run });
  const dueAt = (endpoint: number) => (endpoint === 0 ? ['a', 'limited'] : ['a']);
  const expected = ran.accepted.reduce((sum, [, endpoint]) => sum + dueAt(endpoint).length, 0);
  const { receipts, refused } = await hooks.ask<{ receipts: Receipt[]; refused: number }>({
    collect: { expected, quietMs: spec.quietMs, maxMs: spec.maxWaitMs, reset: true },
  });
  const cpuS = procs.reduce((sum, p, i) => sum + (cpuSecondsOf(p.pid) ?? NaN) - cpu0[i]!, 0);
  const cpuPct = (cpuS / ((performance.now() - wall0) / 1000)) * 100;
  const rss = Math.max(...procs.map((p) => peakRssMB(p.pid) ?? NaN));
  return {
    ...tally(ran, receipts, dueAt, refused),
    ...(Number.isFinite(rss) && { peakRssMB: rss }),
    ...(Number.isFinite(cpuPct) && { cpuPct }),
  };
}

/** What arrived against what was due: per webhook (endpoint and receiver), in order of arrival. */
function tally(ran: Sent, receipts: Receipt[], dueAt: (endpoint: number) => string[], refused: number) {
  const byN = new Map(ran.accepted.map((a, order) => [a[0], { endpoint: a[1], number: a[2] ?? order, at: a[3] }]));
  const latencies: number[] = [];
  const seen = new Set<string>();
  const newest = new Map<string, number>();
  let [duplicates, outOfOrder, limitedDelivered] = [0, 0, 0];
  for (const [kind, n, arrived] of [...receipts].sort((a, b) => a[2] - b[2])) {
    const message = byN.get(n);
    if (!message) continue; // not accepted (never expected)
    const key = `${kind}:${n}`;
    if (seen.has(key)) {
      duplicates++;
      continue;
    }
    seen.add(key);
    latencies.push(arrived - message.at);
    if (kind === 'limited') limitedDelivered++;
    const webhook = `${message.endpoint}:${kind}`;
    if (message.number < (newest.get(webhook) ?? -Infinity)) outOfOrder++;
    else newest.set(webhook, message.number);
  }
  const expected = ran.accepted.reduce((sum, [, endpoint]) => sum + dueAt(endpoint).length, 0);
  const sorted = Float64Array.from(latencies).sort();
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN;
  const limitedExpected = ran.accepted.filter(([, endpoint]) => endpoint === 0).length;
  return {
    sent: ran.sent,
    perSec: ran.perSec,
    statuses: ran.statuses,
    expected,
    delivered: seen.size,
    missing: expected - seen.size,
    duplicates,
    outOfOrder,
    limited: { expected: limitedExpected, delivered: limitedDelivered, refused },
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: sorted.at(-1) ?? NaN,
  };
}
