// The load generator: autocannon, programmatically. `pnpm bench` runs it in a fresh child process
// per measurement (bench/load-child.ts, driven by lib/loadChild.ts); bench:ab runs it in the ab
// process, where A and B alternate. Latency percentiles are computed from every response's own high-resolution time
// (autocannon's histogram rounds to whole milliseconds, too coarse for a 1-3 ms service).
import autocannon from 'autocannon';
import { updateQuery } from './record.ts';

export type Endpoints = readonly { id: string; token: string }[];

/**
 * The n-th request's path: reads rotate over `endpoints`; updates too, and carry values numbered
 * from `seq` up (read back with `seq.next`), so that no update repeats another, across warm-up and
 * measured runs alike, and every one commits a change.
 */
export function pathsOf(op: 'get' | 'update', endpoints: Endpoints, seq = { next: 1 }): (n: number) => string {
  if (op === 'get') {
    return (n) => {
      const e = endpoints[n % endpoints.length]!;
      return `/${e.id}?token=${e.token}`;
    };
  }
  return (n) => {
    const e = endpoints[n % endpoints.length]!;
    return `/update/${e.id}?token=${e.token}&${updateQuery(seq.next++)}`;
  };
}

export interface LoadSpec {
  /** http://host:port */
  origin: string;
  method: 'GET' | 'POST';
  /** Path and query of the n-th request (n counts from 0 across all connections). */
  path: (n: number) => string;
  connections: number;
  durationS: number;
}

export interface LoadFigures {
  requestsPerSec: number;
  requests: number;
  durationS: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Connection errors, timeouts included. */
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** A few distinct error messages, for the report. */
  errorSamples: string[];
  throughputMBps: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export async function runLoad(spec: LoadSpec): Promise<LoadFigures> {
  let n = 0;
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  const errorSamples = new Set<string>();

  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.origin,
        connections: spec.connections,
        duration: spec.durationS,
        pipelining: 1,
        // One request whose path is rebuilt before every send: requests rotate through the
        // provisioned endpoints and updates carry new values.
        requests: [{ method: spec.method, setupRequest: (req) => ({ ...req, path: spec.path(n++) }) }],
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
    durationS: result.duration,
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.length ? sorted[sorted.length - 1]! : NaN,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
    errorSamples: [...errorSamples],
    throughputMBps: result.throughput.average / 1e6,
  };
}
