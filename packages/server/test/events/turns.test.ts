// The turns of the streams' reads: how many run at once, and how many a turn of the event loop starts.
import { describe, expect, it } from 'vitest';
import { TurnQueue } from '../../src/events/turns.ts';

/** A promise and the function that settles it. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Turns of the event loop, counted from now until stopped. */
function turnCounter() {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  return {
    get turns() {
      return turns;
    },
    stop: () => void (running = false),
  };
}

describe('TurnQueue', () => {
  it('when works that wait on the network are queued, then at most `concurrency` are in flight at once, in order', async () => {
    const queue = new TurnQueue({ concurrency: 3 });
    const gates = Array.from({ length: 7 }, () => deferred());
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    const all = gates.map((gate, i) =>
      queue.run(async () => {
        started.push(i);
        most = Math.max(most, ++inFlight);
        await gate.promise;
        inFlight--;
      }),
    );
    for (let turn = 0; turn < 100 && started.length < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 2]); // the fourth waits for a free place
    for (const gate of gates) gate.resolve();
    await Promise.all(all);
    expect(most).toBe(3);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('when the queue runs one at a time, then no work starts before the one before it settled', async () => {
    const queue = new TurnQueue();
    let inFlight = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        queue.run(async () => {
          most = Math.max(most, ++inFlight);
          await new Promise((resolve) => setImmediate(resolve));
          inFlight--;
        }),
      ),
    );
    expect(most).toBe(1);
  });

  it('when many small works are queued, then one turn of the event loop runs them while its slice lasts', async () => {
    const counter = turnCounter();
    const queue = new TurnQueue({ sliceMs: 60_000 });
    await Promise.all(Array.from({ length: 200 }, () => queue.wait()));
    counter.stop();
    expect(counter.turns).toBeLessThanOrEqual(2);
  });

  it('when the slice is spent, then the next work waits for a later turn of the event loop', async () => {
    const counter = turnCounter();
    const queue = new TurnQueue({ sliceMs: 0 });
    await Promise.all(Array.from({ length: 20 }, () => queue.wait()));
    counter.stop();
    expect(counter.turns).toBeGreaterThanOrEqual(19);
  });
});
