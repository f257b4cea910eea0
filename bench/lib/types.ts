// The shape of one scenario's outcome, as printed and as written to bench/results/*.json.
import type { LoadFigures } from './load.ts';

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
  /** The bench process (autocannon) CPU over the measured window; 100 = one core. */
  loadGenCpuPct?: number;
  /** Everything else on the machine over the measured window (other processes: noise); 100 = one core. */
  otherCpuPct?: number;
  ratioToBaseline?: number;
  /** Fingerprint of the server code this scenario ran (see codeFingerprint in run.ts). */
  code?: string;
  /** Set when the server ran under --cpu-prof: figures are not comparable. */
  profile?: string;
  /** The measured window within the profile, in seconds from its start. */
  profileWindow?: { from: number; to: number };
  notes: string[];
}
