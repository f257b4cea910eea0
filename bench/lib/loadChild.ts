// The parent's side of bench/load-child.ts: a fresh load-generator process for one measurement.
import { join } from 'node:path';
import type { LoadFigures, LoadPlan } from './load.ts';
import { ipcChild } from './procs.ts';

export type LoadRequest = { type: 'plan'; plan: LoadPlan } | { type: 'run'; durationS: number };
export type LoadReply =
  | { type: 'ready' }
  | { type: 'ran'; figures: LoadFigures; cpuS: number; nextSeq: number }
  | { type: 'failed'; error: string };

/** Starts a load generator for `plan` and resolves once it is ready, so that no clock counts its start-up. */
async function start(plan: LoadPlan, root: string, env: NodeJS.ProcessEnv) {
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

export const LoadChild = { start };
