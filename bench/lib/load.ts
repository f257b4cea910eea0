// The load generator: autocannon, programmatically, in bench/load-child.ts (startLoadChild starts one). Latency percentiles come
// from every response's own high-resolution time (autocannon's histogram rounds to whole
// milliseconds, too coarse for a 1-3 ms service).
import { join } from 'node:path';
import autocannon from 'autocannon';
import { ipcChild } from './procs.ts';
import { updateQuery } from './record.ts';

export type Endpoints = readonly { id: string; token: string }[];

/** What a load generator needs to build its requests: plain data, sent once over IPC. */
export interface LoadPlan {
  /** http://host:port */
  origin: string;
  op: 'get' | 'update';
  endpoints: Endpoints;
  connections: number;
  /** The first update's number (see pathsOf). */
  seqFrom: number;
}

/**
 * The n-th request's path: requests rotate over `endpoints`; updates carry values numbered from
 * `seq.next` up, so that no update repeats another, across warm-up and measured runs alike, and every
 * one commits a change.
 */
export function pathsOf(op: 'get' | 'update', endpoints: Endpoints, seq = { next: 1 }): (n: number) => string {
  return (n) => {
    const e = endpoints[n % endpoints.length]!;
    return op === 'get' ? `/${e.id}?token=${e.token}` : `/update/${e.id}?token=${e.token}&${updateQuery(seq.next++)}`;
  };
}

export interface LoadFigures {
  requestsPerSec: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Connection errors, timeouts included. */
  errors: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** A few distinct error messages, for the report. */
  errorSamples: string[];
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export async function runLoad(plan: LoadPlan, path: (n: number) => string, durationS: number): Promise<LoadFigures> {
  let n = 0;
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  const errorSamples = new Set<string>();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: plan.origin,
        connections: plan.connections,
        duration: durationS,
        pipelining: 1,
        // One request whose path is rebuilt before every send.
        requests: [{ method: plan.op === 'get' ? 'GET' : 'POST', setupRequest: (req) => ({ ...req, path: path(n++) }) }],
      },
      (err: unknown, res: autocannon.Result) => (err ? reject(err) : resolve(res)),
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = responseTime;
    });
    instance.on('reqError', (err: unknown) => {
      if (errorSamples.size < 5) errorSamples.add(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    });
  });
  const sorted = latencies.subarray(0, count).sort();
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
  return {
    requestsPerSec: result.requests.average,
    requests: result.requests.total,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.length ? sorted[sorted.length - 1]! : NaN,
    errors: result.errors,
    non2xx: result.non2xx,
    statusCodes,
    errorSamples: [...errorSamples],
  };
}

// The parent's side of bench/load-child.ts: a fresh load-generator process for one measurement.
export type LoadRequest = { type: 'plan'; plan: LoadPlan } | { type: 'run'; durationS: number };
export type LoadReply =
  | { type: 'ready' }
  | { type: 'ran'; figures: LoadFigures; cpuS: number; nextSeq: number }
  | { type: 'failed'; error: string };

/** Starts a load generator for `plan` and resolves once it is ready, so that no clock counts its start-up. */
export async function startLoadChild(plan: LoadPlan, root: string, env: NodeJS.ProcessEnv) {
  const child = ipcChild('load generator', [join(root, 'bench/load-child.ts')], env, root);
  const ask = async <T extends LoadReply['type']>(request: LoadRequest, expected: T) => {
    const reply = await child.ask<LoadReply>(request);
    if (reply.type !== expected)
      throw new Error(`load generator: ${reply.type === 'failed' ? reply.error : `'${reply.type}' instead of '${expected}'`}`);
    return reply as Extract<LoadReply, { type: T }>;
  };
  try {
    await ask({ type: 'plan', plan }, 'ready');
  } catch (err) {
    await child.stop();
    throw err;
  }
  return {
    /** Loads the server for `durationS`: the figures, the generator's CPU seconds, the next update's number. */
    run: (durationS: number) => ask({ type: 'run', durationS }, 'ran'),
    stop: child.stop,
  };
}
