// The SQLite store alone, without HTTP: CPU and wall time per update through SqliteEndpointStore, in
// batches as the server's group commit makes them: what an update's SQLite work costs apart from the
// request around it, and whether a change to the store's write path pays before a paired
// `pnpm bench:ab` says whether it shows through a whole request. One process instead of three (no
// HTTP, no autocannon), but the machine still moves it: compare minimums, and versions in alternation.
//
//   pnpm exec node bench/store.ts [--checkout DIR] [--endpoints 1000] [--batch 25] [--batches 200] [--rounds 15]
//
// Each round times `batches` batches of `batch` concurrent updates rotating over the endpoints, each
// update the benchmark's (three scalar overwrites through the server's own applyUpdate, a committed
// write). The same again with decisions that write nothing gives what is not SQLite's write: the
// decision, the batch's transaction and the promises. Prints the minimum, first quartile and median
// over the rounds (the minimum is the least disturbed by the rest of the machine), and the store's
// own timing of its group commits (`observeGroupCommits`): wall time per update in the statements and in
// the COMMIT (its WAL frames, fsync and checkpoints).
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { installCleanup, makeTempDir, removeTempDir } from './lib/procs.ts';
import { median } from './lib/server.ts';
import type { GroupCommitTiming } from '../packages/server/src/store/port.ts';

const { values } = parseArgs({
  options: {
    checkout: { type: 'string', default: resolve(fileURLToPath(import.meta.url), '../..') },
    endpoints: { type: 'string', default: '1000' },
    batch: { type: 'string', default: '25' },
    batches: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '15' },
  },
});
const [endpoints, batchSize, batches, rounds] = [values.endpoints, values.batch, values.batches, values.rounds].map(Number) as [
  number,
  number,
  number,
  number,
];
const checkout = resolve(values.checkout);

// Another checkout's store, so two versions can be compared on the same machine in one session.
const { SqliteEndpointStore } = (await import(join(checkout, 'packages/server/src/store/sqlite.ts'))) as typeof import('../packages/server/src/store/sqlite.ts');
const { applyUpdate } = (await import(join(checkout, 'packages/server/src/domain/update.ts'))) as typeof import('../packages/server/src/domain/update.ts');
const { benchRecord } = await import('./lib/record.ts');

type Store = InstanceType<typeof SqliteEndpointStore>;

/** The store's own timing of its group commits (a checkout from before observeGroupCommits reports none). */
const committed = { updates: 0, statementsMs: 0, commitMs: 0 };
const onGroupCommit = (c: GroupCommitTiming) => {
  committed.updates += c.updates;
  committed.statementsMs += c.statementsMs;
  committed.commitMs += c.commitMs;
};

interface Rounds {
  cpu: number[];
  wall: number[];
  /** Per round, wall µs per update inside the group commit: its statements, and its COMMIT. */
  statements: number[];
  commit: number[];
}

async function timeRounds(store: Store, write: boolean): Promise<Rounds> {
  let n = 0;
  const runBatches = async (count: number) => {
    for (let b = 0; b < count; b++) {
      const updates: Promise<unknown>[] = [];
      for (let k = 0; k < batchSize; k++, n++) {
        const params = { message_content: `bench update ${n}`, message_author_name: `author ${n}`, log_chat_b: `log-${n}` };
        updates.push(
          store.update(`ep-${n % endpoints}`, (current) => {
            const outcome = applyUpdate(current!.recordJson, params, { allowPrivateWebhooks: false });
            if (!outcome.ok) throw new Error(`the bench update was refused: ${JSON.stringify(outcome.issues)}`);
            const decision = { record: outcome.record, recordJson: outcome.json, state: current!.state };
            return write ? { write: decision, result: undefined } : { result: undefined };
          }),
        );
      }
      await Promise.all(updates);
    }
  };
  await runBatches(batches); // warm-up
  const timed: Rounds = { cpu: [], wall: [], statements: [], commit: [] };
  for (let r = 0; r < rounds; r++) {
    Object.assign(committed, { updates: 0, statementsMs: 0, commitMs: 0 });
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    await runBatches(batches);
    const used = process.cpuUsage(cpu0);
    const perUpdate = batches * batchSize;
    timed.cpu.push((used.user + used.system) / perUpdate);
    timed.wall.push(((performance.now() - wall0) * 1000) / perUpdate);
    if (committed.updates > 0) {
      timed.statements.push((committed.statementsMs * 1000) / committed.updates);
      timed.commit.push((committed.commitMs * 1000) / committed.updates);
    }
  }
  return timed;
}

/** The minimum, the first quartile (the round a quarter of the way up) and the bench's median. */
const summary = (xs: number[]) => {
  const q1 = [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 4)]!;
  return `min ${Math.min(...xs).toFixed(1)}, q1 ${q1.toFixed(1)}, median ${median(xs).toFixed(1)}`;
};

installCleanup();
const dir = makeTempDir('chatbridge-store-bench-');
try {
  const store = new SqliteEndpointStore(join(dir, 'store.sqlite'));
  store.observeGroupCommits?.(onGroupCommit);
  const record = benchRecord();
  for (let i = 0; i < endpoints; i++) await store.create(`ep-${i}`, new Uint8Array(32), record);
  console.log(`${checkout}: ${endpoints} endpoints, batches of ${batchSize}, ${rounds} rounds of ${batches} batches; µs per update`);
  for (const write of [true, false]) {
    const before = (await store.get('ep-0'))!.version;
    const { cpu, wall, statements, commit } = await timeRounds(store, write);
    console.log(`  ${write ? 'committed writes      ' : 'decisions, no writes  '} CPU ${summary(cpu)} | wall ${summary(wall)}`);
    if (commit.length > 0) {
      console.log(`    of the wall, in the group commit: statements ${summary(statements)} | COMMIT ${summary(commit)}`);
    }
    // Each endpoint got (rounds + 1) * batches * batch / endpoints updates: did they commit, or not?
    const after = (await store.get('ep-0'))!.version;
    if (write ? after <= before : after !== before) throw new Error(`ep-0 went from version ${before} to ${after}`);
  }
  console.log(`  verified: the writes committed (ep-0 at version ${(await store.get('ep-0'))!.version}), the decisions without writes changed nothing`);
  await store.close();
} finally {
  removeTempDir(dir);
}
