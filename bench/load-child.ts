// One measurement's load generator, in its own process, so that no scenario is loaded by a process
// that earlier scenarios have grown (heap, JIT state, collections). Driven over IPC by lib/load.ts:
//   parent -> { type: 'plan', plan }        child -> { type: 'ready' } once autocannon is loaded
//   parent -> { type: 'run', durationS }    child -> { type: 'ran', figures, cpuS, nextSeq }
// It exits when the parent disconnects.
import { type LoadPlan, type LoadReply, type LoadRequest, pathsOf, runLoad } from './lib/load.ts';

if (!process.send) throw new Error('bench/load-child.ts is started by pnpm bench, with an IPC channel');
const send = (reply: LoadReply) => process.send!(reply);

let plan: LoadPlan | undefined;
const seq = { next: 1 };

process.on('message', (msg: LoadRequest) => {
  if (msg.type === 'plan') {
    plan = msg.plan;
    seq.next = plan.seqFrom;
    send({ type: 'ready' });
    return;
  }
  if (!plan) return send({ type: 'failed', error: 'run before plan' });
  const cpu0 = process.cpuUsage();
  runLoad(plan, pathsOf(plan.op, plan.endpoints, seq), msg.durationS).then(
    (figures) => {
      const cpu = process.cpuUsage(cpu0);
      send({ type: 'ran', figures, cpuS: (cpu.user + cpu.system) / 1e6, nextSeq: seq.next });
    },
    (err: unknown) => send({ type: 'failed', error: err instanceof Error ? err.message : String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
