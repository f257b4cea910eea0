// The parent's side of bench/load-child.ts: a fresh load-generator process for one measurement.
import { join } from 'node:path';
import type { LoadFigures, LoadPlan } from './load.ts';
import { type Spawned, spawnTracked, stopChild } from './procs.ts';

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

  /** Starts a load generator for `plan` and resolves once it is ready, so that no clock counts its start-up. */
  static async start(plan: LoadPlan, root: string, env: NodeJS.ProcessEnv): Promise<LoadChild> {
    const child = new LoadChild(spawnTracked('load generator', [join(root, 'bench/load-child.ts')], env, root, true));
    try {
      await child.request({ type: 'plan', plan }, 'ready');
    } catch (err) {
      await child.stop();
      throw err;
    }
    return child;
  }

  /** Loads the server for `durationS`; rejects with the child's last output if it dies or has died. */
  async run(durationS: number): Promise<LoadRun> {
    const { figures, cpuS, nextSeq } = await this.request({ type: 'run', durationS }, 'ran');
    return { figures, cpuS, nextSeq };
  }

  /** The child exits when disconnected; killed if it has not within 5 s. */
  async stop(): Promise<void> {
    if (this.proc.child.connected) this.proc.child.disconnect();
    const timer = setTimeout(() => void stopChild(this.proc, 2_000), 5_000);
    await this.proc.exited;
    clearTimeout(timer);
  }

  private request<T extends LoadReply['type']>(request: LoadRequest, expected: T): Promise<Extract<LoadReply, { type: T }>> {
    const { child } = this.proc;
    return new Promise((resolve, reject) => {
      const onMessage = (reply: LoadReply) => {
        child.off('message', onMessage);
        if (reply.type === expected) resolve(reply as Extract<LoadReply, { type: T }>);
        else reject(new Error(`load generator: ${reply.type === 'failed' ? reply.error : `'${reply.type}' instead of '${expected}'`}`));
      };
      child.on('message', onMessage);
      // `exited` stays resolved, so a child that died earlier fails the request at once.
      void this.proc.exited.then(({ code, signal }) => {
        child.off('message', onMessage);
        reject(new Error(`load generator exited (${signal ?? `code ${code}`}): ${this.proc.output().trim().slice(-2_000)}`));
      });
      if (child.connected) child.send(request, (err) => err && reject(err));
    });
  }
}
