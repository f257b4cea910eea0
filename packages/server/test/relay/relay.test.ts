// The relay against a store that fails: an outage is logged once (then at most once a minute), the
// passes back off, and the recovery is logged.
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/logger.ts';
import { loadConfig } from '../../src/config.ts';
import { createWebhookSender } from '../../src/delivery/send.ts';
import { Relay } from '../../src/relay/relay.ts';
import type { EndpointStore } from '../../src/store/port.ts';

function recordingLogger() {
  const lines: { level: string; msg: string }[] = [];
  const at = (level: string) => (_fields: object, msg: string) => void lines.push({ level, msg });
  return { lines, logger: { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') } as unknown as Logger };
}

describe('relay during a store outage', () => {
  let relay: Relay | undefined;
  afterEach(async () => relay?.stop());

  it('when every pass fails, then one error is logged and passes back off; when the store returns, the recovery is logged once', async () => {
    let down = true;
    let passes = 0;
    const store = {
      listExpired: async () => {
        passes++;
        if (down) throw new Error('Connection terminated unexpectedly');
        return [];
      },
      claimDeliveries: async () => [],
    } as unknown as EndpointStore;
    const { lines, logger } = recordingLogger();
    relay = new Relay({ store, sender: { send: async () => ({ kind: 'delivered' }) } as never, logger, clock: Date.now, messageTtlMs: 30_000, pollMs: 10 });
    relay.start();
    await new Promise((resolve) => setTimeout(resolve, 700));
    // Without backoff, 10 ms polls make ~70 passes here; doubling from 10 ms makes about six.
    expect(passes).toBeGreaterThan(2);
    expect(passes).toBeLessThan(12);
    expect(lines).toEqual([{ level: 'error', msg: 'relay pass failed; retrying with backoff' }]);

    down = false;
    relay.wake();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(lines.slice(1)).toEqual([{ level: 'info', msg: 'relay passes succeed again' }]);
  });
});

describe('relay leases', () => {
  it('when a delivery is claimed, then its lease outlasts one attempt and, with the default TTL, runs out before the message expires', async () => {
    const sender = createWebhookSender({ allowPrivate: false });
    const leases: number[] = [];
    const store = {
      listExpired: async () => [],
      claimDeliveries: async (_now: number, leaseMs: number) => (leases.push(leaseMs), []),
    } as unknown as EndpointStore;
    const relay = new Relay({ store, sender, logger: recordingLogger().logger, clock: Date.now, messageTtlMs: 30_000 });
    await relay.pass();
    await sender.close();
    // A delivery whose instance died mid-attempt is claimed again when its lease runs out: the lease
    // used to be 30 s, as long as the default TTL, so such a delivery expired unsent.
    expect(leases[0]).toBeGreaterThan(sender.attemptDeadlineMs);
    expect(leases[0]! + 5_000).toBeLessThan(loadConfig({}).messageTtlMs);
  });
});
