// One measurement's load generator, as its own process: `pnpm bench` forks one per measurement
// (a warm-up and its measured window), so that no scenario's load runs in a process that earlier
// scenarios have already loaded (heap, JIT state, collections). Driven over IPC by lib/loadChild.ts:
//
//   parent -> { type: 'run', durationS }   load the server for that long
//   child  -> { type: 'ran', figures, cpuS, nextSeq }   its figures, this process's CPU seconds
//                                           over the run, and the next update's number
//
// The plan (origin, operation, endpoints, connections, first update number) comes in the first
// message, { type: 'plan', plan }, answered { type: 'ready' } once autocannon is loaded, so that the
// parent starts its clocks after this process's start-up. The child exits when the parent disconnects.
import type { LoadPlan, LoadReply, LoadRequest } from './lib/loadChild.ts';
import { pathsOf, runLoad } from './lib/load.ts';

if (!process.send) throw new Error('bench/load-child.ts is started by pnpm bench, with an IPC channel');
const send = (reply: LoadReply) => process.send!(reply);

let plan: LoadPlan | undefined;
let seq = { next: 1 };
let path: ((n: number) => string) | undefined;

process.on('message', (msg: LoadRequest) => {
  if (msg.type === 'plan') {
    plan = msg.plan;
    seq = { next: plan.seqFrom };
    path = pathsOf(plan.op, plan.endpoints, seq);
    send({ type: 'ready' });
    return;
  }
  if (!plan || !path) {
    send({ type: 'failed', error: 'run before plan' });
    return;
  }
  const cpu0 = process.cpuUsage();
  runLoad({ origin: plan.origin, method: plan.op === 'get' ? 'GET' : 'POST', path, connections: plan.connections, durationS: msg.durationS }).then(
    (figures) => {
      const cpu = process.cpuUsage(cpu0);
      send({ type: 'ran', figures, cpuS: (cpu.user + cpu.system) / 1e6, nextSeq: seq.next });
    },
    (err: unknown) => send({ type: 'failed', error: err instanceof Error ? err.message : String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
