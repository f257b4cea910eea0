// The parent's side of bench/load-child.ts: a fresh load-generator process for one measurement.
import { join } from 'node:path';
import type { Endpoints, LoadFigures } from './load.ts';
import { type Spawned, spawnTracked, stopChild } from './procs.ts';

/** What the child needs to build its requests: plain data, sent once over IPC. */
export interface LoadPlan {
  /** http://host:port */
  origin: string;
  op: 'get' | 'update';
  endpoints: Endpoints;
  connections: number;
  /** The first update's number (see pathsOf). */
  seqFrom: number;
}

export type LoadRequest = { type: 'plan'; plan: LoadPlan } | { type: 'run'; durationS: number };
export type LoadReply =
  | { type: 'ready' }
  | { type: 'ran'; figures: LoadFigures; cpuS: number; nextSeq: number }
  | { type: 'failed'; error: string };

export interface LoadRun {
  figures: LoadFigures;
  /** The load generator's CPU over the run, in seconds. */
  cpuS: number;
  /** The next update's number: where the next plan's seqFrom starts. */
  nextSeq: number;
}

export class LoadChild {
  private readonly proc: Spawned;

  private constructor(proc: Spawned) {
    this.proc = proc;
  }

  get pid(): number {
    return this.proc.pid;
  }

  /** Starts a load generator for `plan`, in a new process, and resolves once it is ready to load. */
  static async start(plan: LoadPlan, root: string, env: NodeJS.ProcessEnv): Promise<LoadChild> {
    const proc = spawnTracked('load generator', [join(root, 'bench/load-child.ts')], env, root, { ipc: true });
    const child = new LoadChild(proc);
    try {
      expectReply(await child.request({ type: 'plan', plan }), 'ready');
    } catch (err) {
      await child.stop();
      throw err;
    }
    return child;
  }

  /** Loads the server for `durationS`; rejects, with the child's last output, if the child dies or has died. */
  async run(durationS: number): Promise<LoadRun> {
    const reply = expectReply(await this.request({ type: 'run', durationS }), 'ran');
    return { figures: reply.figures, cpuS: reply.cpuS, nextSeq: reply.nextSeq };
  }

  /** Lets the child exit (it exits on disconnect); kills it if it has not within 5 s. */
  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }> {
    if (this.proc.child.connected) this.proc.child.disconnect();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), 5_000);
    });
    const outcome = await Promise.race([this.proc.exited, late]);
    clearTimeout(timer);
    return outcome === 'late' ? stopChild(this.proc, 2_000) : { ...outcome, killed: false };
  }

  /**
   * Sends `request` and waits for the child's reply, or for its exit: `exited` stays resolved, so a
   * child that died earlier (say, between a warm-up and its measured run) fails the request at once.
   */
  private request(request: LoadRequest): Promise<LoadReply> {
    const { child } = this.proc;
    return new Promise<LoadReply>((resolve, reject) => {
      const onMessage = (reply: LoadReply) => {
        child.off('message', onMessage);
        resolve(reply);
      };
      child.on('message', onMessage);
      void this.proc.exited.then(({ code, signal }) => {
        child.off('message', onMessage);
        reject(new Error(`load generator exited (${signal ?? `code ${code}`}): ${this.proc.output().trim().slice(-2_000)}`));
      });
      if (!child.connected) return; // exited (or about to): the rejection above comes
      child.send(request, (err) => {
        if (err) {
          child.off('message', onMessage);
          reject(err);
        }
      });
    });
  }
}

/** The reply of the expected type; a failure or anything else is an error. */
function expectReply<T extends LoadReply['type']>(reply: LoadReply, type: T): Extract<LoadReply, { type: T }> {
  if (reply.type === type) return reply as Extract<LoadReply, { type: T }>;
  throw new Error(reply.type === 'failed' ? `load generator: ${reply.error}` : `load generator: '${reply.type}' instead of '${type}'`);
}
