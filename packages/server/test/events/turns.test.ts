// The turns the streams' work waits for: reads of the log one at a time, one starting per turn of the
// event loop; looks at the store many to a turn, beside the reads.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { LOOKS_PER_TURN, TurnQueue } from '../../src/events/turns.ts';

/** Runs turns of the event loop until `done` holds, counting them. */
async function turnsUntil(done: () => boolean): Promise<number> {
  let turns = 0;
  while (!done()) {
    await nextTurn();
    turns++;
    if (turns > 10_000) throw new Error('never done');
  }
  return turns;
}

describe('TurnQueue', () => {
  it('when reads are queued, then one runs at a time, in order, the next only once the one before has settled', async () => {
    const queue = new TurnQueue();
    const order: string[] = [];
    let inFlight = 0;
    let most = 0;
    const read = (name: string) =>
      queue.run(async () => {
        inFlight++;
        most = Math.max(most, inFlight);
        order.push(`${name} starts`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        order.push(`${name} ends`);
        inFlight--;
        return name;
      });
    expect(await Promise.all([read('a'), read('b'), read('c')])).toEqual(['a', 'b', 'c']);
    expect(order).toEqual(['a starts', 'a ends', 'b starts', 'b ends', 'c starts', 'c ends']);
    expect(most).toBe(1);
  });

  it('when work is queued, then none of it runs within the caller’s own turn', async () => {
    const queue = new TurnQueue();
    let read = false;
    let looked = false;
    void queue.run(() => (read = true));
    void queue.wait().then(() => (looked = true));
    await Promise.resolve();
    expect([read, looked]).toEqual([false, false]);
    await turnsUntil(() => read && looked);
  });

  it('when thousands of looks wait, then each turn starts at most LOOKS_PER_TURN of them, in order', async () => {
    const queue = new TurnQueue();
    const started: number[] = [];
    const perTurn: number[] = [];
    const count = LOOKS_PER_TURN * 10 + 5;
    for (let i = 0; i < count; i++) void queue.wait().then(() => started.push(i));
    let before = 0;
    while (started.length < count) {
      await nextTurn();
      perTurn.push(started.length - before);
      before = started.length;
      if (perTurn.length > count) throw new Error('never done');
    }
    expect(started).toEqual([...started].sort((a, b) => a - b));
    expect(Math.max(...perTurn)).toBeLessThanOrEqual(LOOKS_PER_TURN);
    expect(perTurn.filter((n) => n > 0).length).toBeGreaterThanOrEqual(11);
  });

  it('when a read is waiting on the network, then looks still start', async () => {
    const queue = new TurnQueue();
    let answer!: () => void;
    const read = queue.run(() => new Promise<void>((resolve) => (answer = resolve)));
    await turnsUntil(() => answer !== undefined);
    let looked = 0;
    for (let i = 0; i < 3; i++) void queue.wait().then(() => looked++);
    await turnsUntil(() => looked === 3);
    let second = false;
    void queue.run(() => (second = true));
    await nextTurn();
    await nextTurn();
    expect(second).toBe(false); // reads stay one at a time
    answer();
    await read;
    await turnsUntil(() => second);
  });
});
