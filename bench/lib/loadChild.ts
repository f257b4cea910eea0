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

  /** Starts a load generator for `plan`, in a new process. */
  static start(plan: LoadPlan, root: string, env: NodeJS.ProcessEnv): LoadChild {
    const proc = spawnTracked('load generator', [join(root, 'bench/load-child.ts')], env, root, { ipc: true });
    const child = new LoadChild(proc);
    child.send({ type: 'plan', plan });
    return child;
  }

  /** Loads the server for `durationS`; rejects, with the child's last output, if the child dies. */
  run(durationS: number): Promise<LoadRun> {
    const { child } = this.proc;
    return new Promise<LoadRun>((resolve, reject) => {
      const onMessage = (reply: LoadReply) => {
        settle();
        if (reply.type === 'ran') resolve({ figures: reply.figures, cpuS: reply.cpuS, nextSeq: reply.nextSeq });
        else reject(new Error(`load generator: ${reply.error}`));
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        settle();
        reject(new Error(`load generator exited (${signal ?? `code ${code}`}): ${this.proc.output().trim().slice(-2_000)}`));
      };
      const settle = () => {
        child.off('message', onMessage);
        child.off('exit', onExit);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
      this.send({ type: 'run', durationS });
    });
  }

  /** Lets the child exit (it exits on disconnect); kills it if it has not within 5 s. */
  async stop(): Promise<void> {
    if (this.proc.child.connected) this.proc.child.disconnect();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), 5_000);
    });
    const outcome = await Promise.race([this.proc.exited, late]);
    clearTimeout(timer);
    if (outcome === 'late') await stopChild(this.proc, 2_000);
  }

  private send(request: LoadRequest): void {
    this.proc.child.send(request);
  }
}
