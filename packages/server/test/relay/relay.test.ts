// The relay against a store that fails: an outage is logged once (then at most once a minute), the
// passes back off, and the recovery is logged.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../../src/logger.ts';
import { loadConfig } from '../../src/config.ts';
import { createWebhookSender } from '../../src/delivery/send.ts';
import { Relay } from '../../src/relay/relay.ts';
import { initialRecord } from '../../src/domain/record.ts';
import type { Delivery, EndpointStore } from '../../src/store/port.ts';
import type { SendOutcome } from '../../src/delivery/send.ts';

function recordingLogger() {
  const lines: { level: string; msg: string }[] = [];
  const at = (level: string) => (_fields: object, msg: string) => void lines.push({ level, msg });
  const logger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), child: () => logger };
  return { lines, logger: logger as unknown as Logger };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('relay during a store outage', () => {
  let relay: Relay | undefined;
  afterEach(async () => relay?.stop());

  it('when every pass fails, then one error is logged and passes back off; when the store returns, the recovery is logged once', async () => {
    let down = true;
    let passes = 0;
    const store = {
      endpoints: {
        listExpired: async () => {
          passes++;
          if (down) throw new Error('Connection terminated unexpectedly');
          return [];
        },
      },
      deliveries: { claim: async () => [] },
    } as unknown as EndpointStore;
    const { lines, logger } = recordingLogger();
    relay = new Relay({
      store,
      sender: { deliver: async () => ({ kind: 'delivered' }) } as never,
      logger,
      clock: Date.now,
      messageTtlMs: 30_000,
      pollMs: 10,
    });
    relay.start();
    await vi.advanceTimersByTimeAsync(700);
    // Without backoff, 10 ms polls make ~70 passes here; doubling from 10 ms makes about six.
    expect(passes).toBeGreaterThan(2);
    expect(passes).toBeLessThan(12);
    expect(lines).toEqual([{ level: 'error', msg: 'relay pass failed; retrying with backoff' }]);

    down = false;
    relay.wake();
    await vi.advanceTimersByTimeAsync(100);
    expect(lines.slice(1)).toEqual([{ level: 'info', msg: 'relay passes succeed again' }]);
  });
});

describe('relay leases', () => {
  it('when a delivery is claimed, then its lease outlasts one attempt and, with the default TTL, runs out before the message expires', async () => {
    const sender = createWebhookSender({ allowPrivateWebhooks: false });
    const leases: number[] = [];
    const store = {
      endpoints: { listExpired: async () => [] },
      deliveries: { claim: async (_now: number, leaseMs: number) => (leases.push(leaseMs), []) },
    } as unknown as EndpointStore;
    const relay = new Relay({ store, sender, logger: recordingLogger().logger, clock: Date.now, messageTtlMs: 30_000 });
    await relay.pass();
    await sender.close();
    // A delivery whose instance died mid-attempt is claimed again when its lease runs out: a lease as
    // long as the TTL would let such a delivery expire unsent.
    expect(leases[0]).toBeGreaterThan(sender.attemptDeadlineMs);
    expect(leases[0]! + 5_000).toBeLessThan(loadConfig({}).messageTtlMs);
  });
});

describe('relay acknowledgements', () => {
  it('when recording a delivery the webhook accepted fails once, then the record is retried and the webhook is not sent it again', async () => {
    const url = 'https://chat-a.example.com/hooks/0123456789012345678901234567890123456789';
    const record = initialRecord();
    record.config['self-user'] = true;
    record.config.webhooks.chat_a = [url];
    record.meta.trigger = true;
    const delivery: Delivery = {
      id: 1,
      endpointId: 'ep-1',
      kind: 'create',
      seq: 1,
      platform: 'chat_a',
      url,
      payload: '{"content":"hi"}',
      expiresAt: Date.now() + 30_000,
      attempts: 1,
    };
    let claims = 0;
    let records = 0;
    const store = {
      endpoints: {
        listExpired: async () => [],
        // chat_a has still to read message 1.
        get: async () => ({ record, state: { seq: 1, pendingSince: Date.now(), queue: [{ n: 1, u: 1, at: Date.now(), b: 2 }] } }),
      },
      deliveries: {
        claim: async () => (claims++ === 0 ? [delivery] : []),
        complete: async () => {
          if (++records === 1) throw new Error('Connection terminated unexpectedly');
        },
      },
    } as unknown as EndpointStore;
    let sends = 0;
    const sender = { attemptDeadlineMs: 20_000, deliver: async () => (sends++, { kind: 'delivered' as const, status: 200 }) };
    const relay = new Relay({ store, sender, logger: recordingLogger().logger, clock: Date.now, messageTtlMs: 30_000, pollMs: 10 });
    relay.start();
    try {
      await vi.advanceTimersByTimeAsync(2_000); // well within the lease
      expect(relay.stats.delivered).toBe(1);
      expect([sends, records]).toEqual([1, 2]);
    } finally {
      await relay.stop();
    }
  });
});

describe("relay: an endpoint's share of a platform's slots", () => {
  /** The chat_a webhook of bridge `bridge`. */
  const url = (bridge: number) => `https://chat-a.example.com/hooks/${bridge}/0123456789012345678901234567890123456789`;
  const record = initialRecord();
  record.config['self-user'] = true;
  record.config.webhooks.chat_a = [0, 1, 2, 3].map(url);
  record.meta.trigger = true;

  /**
   * An outbox of chat_a deliveries that honours claim limits and passed-over endpoints. As in the
   * real store, a webhook has one entry out at a time (its oldest): an endpoint has several attempts
   * under way only through several webhooks (bridges), so each delivery here goes to a bridge of its own.
   */
  function outbox() {
    const due: Delivery[] = [];
    const queue = (id: number, endpointId: string) =>
      due.push({
        id,
        endpointId,
        kind: 'create',
        seq: id,
        platform: 'chat_a',
        url: url(id - 1),
        payload: '{}',
        expiresAt: Date.now() + 30_000,
        attempts: 1,
      });
    const store = {
      endpoints: {
        listExpired: async () => [],
        // chat_a has still to read messages 1 to 4 (each endpoint's own, numbered apart here).
        get: async () => ({
          record,
          state: { seq: 4, pendingSince: Date.now(), queue: [1, 2, 3, 4].map((n) => ({ n, u: 1, at: Date.now(), b: 2 })) },
        }),
      },
      deliveries: {
        claim: async (_now: number, _leaseMs: number, limits: { chat_a?: number }, skip: { chat_a?: string[] } = {}) => {
          const claimable = due.filter((d) => !skip.chat_a?.includes(d.endpointId)).slice(0, limits.chat_a ?? 0);
          for (const d of claimable) due.splice(due.indexOf(d), 1);
          return claimable;
        },
        complete: async () => undefined,
      },
    } as unknown as EndpointStore;
    return { store, due, queue };
  }

  /** A webhook sender whose attempts hang until the test answers them. */
  function heldSender() {
    const attempts = new Map<string, () => void>();
    const sender = {
      attemptDeadlineMs: 20_000,
      deliver: (_url: string, _call: unknown, key: string) =>
        new Promise<SendOutcome>((resolve) => attempts.set(key.split(':').at(-1)!, () => resolve({ kind: 'delivered', status: 200 }))),
    };
    return { sender, attempts };
  }

  it("when an endpoint holds 2 of chat_a's slots, then its third delivery waits and another endpoint's goes out; when one of its attempts ends, then the third goes out at once", async () => {
    const { store, due, queue } = outbox();
    const { sender, attempts } = heldSender();
    const relay = new Relay({ store, sender, logger: recordingLogger().logger, clock: Date.now, messageTtlMs: 30_000, pollMs: 60_000 });
    relay.start();
    try {
      // One message after another, to three of its bridges; the attempts under way keep waiting for the webhooks.
      for (const id of [1, 2, 3]) {
        queue(id, 'noisy');
        relay.wake();
        await vi.advanceTimersByTimeAsync(0);
      }
      queue(4, 'other');
      relay.wake();
      await vi.advanceTimersByTimeAsync(0);
      expect([...attempts.keys()].sort()).toEqual(['1', '2', '4']);
      expect(due.map((d) => d.id)).toEqual([3]);

      attempts.get('1')!();
      await vi.advanceTimersByTimeAsync(0); // no poll interval passes: the ended attempt starts a pass
      expect([...attempts.keys()].sort()).toEqual(['1', '2', '3', '4']);
      expect(due).toEqual([]);
    } finally {
      for (const answer of attempts.values()) answer();
      await relay.stop();
    }
  });
});
