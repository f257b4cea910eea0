// The shape of one scenario's outcome, as printed and as written to bench/results/*.json.
import type { LoadFigures } from './load.ts';
import type { Collections } from './collections.ts';

export interface ScenarioResult {
  n: number;
  key: string;
  title: string;
  status: 'ok' | 'skipped' | 'failed';
  /** Why it was skipped or failed. */
  reason?: string;
  figures?: LoadFigures;
  warmup?: { requests: number; errors: number; non2xx: number };
  server?: {
    /** VmHWM of the server process at the end of the measured window (peak since it started). */
    peakRssMB?: number;
    rssMB?: number;
    /** Server CPU over the measured window; 100 = one core. */
    cpuPct?: number;
    /**
     * Server CPU time per answered request, in microseconds: what a request costs, and much less
     * sensitive than req/s to other load on a shared machine.
     */
    cpuUsPerRequest?: number;
    exit?: string;
  };
  /** V8's garbage collections in the server over the measured window (its /-/metrics). */
  collections?: Collections;
  /** The load generator's CPU (its own process, autocannon) over the measured window; 100 = one core. */
  loadGenCpuPct?: number;
  /** Everything else on the machine over the measured window (other processes: noise); 100 = one core. */
  otherCpuPct?: number;
  /**
   * req/s over the baseline: the ratio the targets use. Since the baseline runs beside every scenario,
   * it is over this scenario's adjacent baseline (baselineRequestsPerSec); in older reports, over the
   * mean of the baseline's runs at the start and the end of the run (1 and 1b).
   */
  ratioToBaseline?: number;
  /**
   * The baseline req/s ratioToBaseline was taken over: the mean of the baseline measured right before
   * this scenario and the one right after it (baselineAdjacent). For scenario 1, the median of all
   * the baseline's runs. Absent in reports older than the adjacent baselines.
   */
  baselineRequestsPerSec?: number;
  /** The adjacent baseline measurements behind baselineRequestsPerSec, in req/s (BaselineRun.seq in `seq`). */
  baselineAdjacent?: { before?: number; after?: number; seq: number[] };
  /** Fingerprint of the server code this scenario ran (see codeFingerprint in run.ts). */
  code?: string;
  /** Set when the server ran under --cpu-prof: figures are not comparable. */
  profile?: string;
  /** The measured window within the profile, in seconds from its start. */
  profileWindow?: { from: number; to: number };
  notes: string[];
}

/**
 * One measurement of the bare node:http baseline (scenario 1). The baseline server starts once and
 * stays up, idle, for the whole run; it is loaded right before every measured scenario and once after
 * the last, so each scenario is bracketed by the baseline measured before it and after it.
 */
export interface BaselineRun {
  /** 1, 2, ... in run order. */
  seq: number;
  /** The scenario measured right before this baseline run (key), if any. */
  after?: string;
  /** The scenario measured right after this baseline run (key), if any. */
  before?: string;
  status: 'ok' | 'failed';
  reason?: string;
  warmupS: number;
  durationS: number;
  figures?: LoadFigures;
  warmup?: { requests: number; errors: number; non2xx: number };
  server?: { peakRssMB?: number; rssMB?: number; cpuPct?: number; cpuUsPerRequest?: number };
  loadGenCpuPct?: number;
  otherCpuPct?: number;
  /** CPU seconds the baseline server used since its previous run ended, while it was meant to be idle. */
  idleCpuS?: number;
}
