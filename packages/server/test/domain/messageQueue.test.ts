import { describe, expect, it } from 'vitest';
import {
  enqueue,
  expireQueued,
  headOf,
  markQueued,
  MESSAGE_QUEUE_LIMITS,
  maskOf,
  queueFullProblem,
  type QueuedMessage,
  statusOf,
} from '../../src/domain/messageQueue.ts';

const msg = (n: number, platforms: Parameters<typeof maskOf>[0], at = n * 1000, b = 10): QueuedMessage => ({
  n,
  u: maskOf(platforms),
  at,
  b,
});

describe('message queue', () => {
  it('when a message is appended, then older ones stay queued before it; one nobody else needs is not queued', () => {
    const q = enqueue(enqueue([], msg(1, ['chat_a', 'chat_d'])), msg(2, ['chat_a']));
    expect(q.map((m) => m.n)).toEqual([1, 2]);
    expect(enqueue(q, msg(3, []))).toBe(q);
  });

  it('when a platform reads without a number, then its oldest unread is marked; the message leaves once every platform has read it', () => {
    const q = [msg(1, ['chat_a', 'chat_d']), msg(2, ['chat_d'])];
    expect(headOf(q, 'chat_d')?.n).toBe(1);
    expect(headOf(q, 'chat_c')).toBeUndefined();
    const first = markQueued(q, 'chat_d');
    expect(first.marked).toBe(1);
    expect(first.settle).toEqual([{ number: 1, unread: maskOf(['chat_a']), expired: 0 }]);
    const second = markQueued(first.queue, 'chat_a', 1);
    expect(second.queue.map((m) => m.n)).toEqual([2]);
    expect(second.settle).toEqual([{ number: 1, unread: 0, expired: 0 }]);
  });

  it('when a platform marks a message it has read already, or one never queued, then nothing changes', () => {
    const q = [msg(1, ['chat_a'])];
    expect(markQueued(q, 'chat_d', 1)).toEqual({ queue: q, settle: [], marked: undefined });
    expect(markQueued(q, 'chat_a', 7).marked).toBeUndefined();
  });

  it('when messages pass the TTL, then their unread copies expire and newer ones stay', () => {
    const q = [msg(1, ['chat_a', 'chat_d'], 0), msg(2, ['chat_d'], 50_000)];
    const out = expireQueued(q, (m) => 60_000 - m.at >= 30_000);
    expect(out.queue.map((m) => m.n)).toEqual([2]);
    expect(out.settle).toEqual([{ number: 1, unread: 0, expired: maskOf(['chat_a', 'chat_d']) }]);
    expect(out.expired).toEqual([{ number: 1, platforms: ['chat_a', 'chat_d'] }]);
  });

  it("when one platform's copy is given up, then the other platforms still have the message to read", () => {
    const out = expireQueued([msg(1, ['chat_a', 'chat_d'])], (m) => m.n === 1, 'chat_a');
    expect(out.queue).toEqual([msg(1, ['chat_d'])]);
    expect(statusOf(out.queue[0]!.u, maskOf(['chat_a']), 'chat_a')).toBe('expired');
    expect(statusOf(out.queue[0]!.u, maskOf(['chat_a']))).toBe('pending');
    expect(statusOf(0, 0)).toBe('read');
  });

  it('when the queue is at its count or byte bound, then one more message is refused naming the bound', () => {
    const full = Array.from({ length: MESSAGE_QUEUE_LIMITS.messages }, (_, i) => msg(i + 1, ['chat_a']));
    expect(queueFullProblem(full, 10)).toContain(`${MESSAGE_QUEUE_LIMITS.messages} unread messages`);
    expect(queueFullProblem(full.slice(1), 10)).toBeUndefined();
    expect(queueFullProblem([msg(1, ['chat_a'], 0, MESSAGE_QUEUE_LIMITS.bytes - 5)], 10)).toContain(
      `bound of ${MESSAGE_QUEUE_LIMITS.bytes}`,
    );
  });
});
