// The relay drains the outbox and expires messages nobody read in time. Every server instance runs
// one; the store hands each outbox entry to one worker at a time (a lease), so instances share the
// work without delivering twice. Each webhook is a queue of its own: the store hands out only the
// oldest entry of a webhook, so its messages go out one at a time and in number order, and a retry or
// a rate limit of one webhook holds that webhook's queue alone. A delivery is acknowledged (entry
// removed, the message marked read by the platform) in one transaction after the webhook answered 2xx;
// an unacknowledged one is retried after its lease.
// Each webhook platform has a lane of its own: a platform whose webhooks all hang fills its own
// slots, never the other's. Within a lane, one endpoint holds at most 2 of the 256 slots (per
// instance): its further deliveries wait in the outbox until one of its attempts ends, so other
// endpoints wait for a slot only once the webhooks of 128 endpoints or more hang at once.
import { nextAttemptDelay } from '../delivery/backoff.ts';
import { parseQueuedCreate, withReplyReference } from '../delivery/payload.ts';
import { redactWebhookUrl } from '../delivery/send.ts';
import type { DeliveryCall, SendOutcome, WebhookSender } from '../delivery/send.ts';
import { expireMessages, isExpired, markRead, stillUnread } from '../domain/lifecycle.ts';
import { currentReplyIds } from '../domain/messageIds.ts';
import { type Platform, WEBHOOK_PLATFORMS } from '../domain/record.ts';
import type { Logger } from '../logger.ts';
import type { Delivery, EndpointStore } from '../store/port.ts';

export interface RelayOptions {
  store: EndpointStore;
  sender: Pick<WebhookSender, 'deliver' | 'attemptDeadlineMs'>;
  logger: Logger;
  clock: () => number;
  messageTtlMs: number;
  /**
   * How long a claimed delivery is reserved (default: the sender's attempt deadline plus 2 s). A
   * delivery whose instance died mid-attempt is claimed again when it runs out, so it must be short
   * enough for that to happen before the message expires (30 s by default), and longer than an attempt.
   */
  leaseMs?: number;
  /** Idle wait between outbox polls (a queued delivery wakes the relay sooner). */
  pollMs?: number;
  /** On stop, how long attempts under way may still finish (default 5 s); the rest are cut short and released. */
  stopGraceMs?: number;
  /**
   * Deliveries claimed per pass and platform at most (default 64). A webhook contributes one at a time
   * (its oldest), so a pass serves up to this many webhooks of a platform.
   */
  batchSize?: number;
  /**
   * Deliveries under way at once per webhook platform at most (default 256); a slow webhook holds
   * one of them, not the relay. Past it, the platform's deliveries wait in the outbox for a slot.
   */
  maxInFlight?: number;
  /**
   * Of a platform's slots, how many one endpoint holds at once at most (default 2): an attempt still
   * under way for a message since replaced counts too. Past it, that endpoint's next delivery to the
   * platform waits in the outbox (its TTL running) until one of its attempts ends.
   */
  maxInFlightPerEndpoint?: number;
  /** Told of every outcome, e.g. to count it in metrics. */
  observe?: (event: keyof RelayStats) => void;
  /** How often read messages past retention are pruned from the message log (default 60 s). */
  retentionSweepMs?: number;
}

export interface RelayStats {
  delivered: number;
  retried: number;
  rejected: number;
  gaveUp: number;
  expired: number;
  /**
   * Dropped unsent: since it was queued, its platform read the message, or its webhook or `selfuse`
   * went; or an edit or delete of a copy whose ID is not known.
   */
  superseded: number;
  /** The webhook asked for a pause (its rate limit is used up): its queue waits. */
  held: number;
}

const FAILURE_LOG_INTERVAL_MS = 60_000;
const LEASE_MARGIN_MS = 2_000;
const MAX_RETRY_DELAY_MS = 10_000;
/** Retries of recording an accepted delivery: from 100 ms, doubling up to 2 s, while its lease holds. */
const ACK_RETRY_FIRST_MS = 100;
const ACK_RETRY_MAX_MS = 2_000;

/** A platform's slots in all, and one endpoint's share of them. */
export const RELAY_SLOTS = { perPlatform: 256, perEndpoint: 2 } as const;

/**
 * Names one message's delivery to one platform; receivers may use it to drop duplicates. The outbox
 * entry's ID ends it: message numbers start again at 1 when an endpoint ID is deleted and created
 * anew, while outbox IDs are never reused, so a new message never carries an old message's key.
 */
export const idempotencyKey = (d: Delivery) => `${d.endpointId}:${d.seq}:${d.platform}:${d.id}`;

/** One webhook platform's deliveries under way, and how many of them each endpoint holds. */
class Lane {
  readonly underWay = new Set<Promise<void>>();
  private readonly held = new Map<string, number>();

  get size(): number {
    return this.underWay.size;
  }

  add(endpointId: string, delivery: Promise<void>): void {
    this.underWay.add(delivery);
    this.held.set(endpointId, (this.held.get(endpointId) ?? 0) + 1);
  }

  remove(endpointId: string, delivery: Promise<void>): void {
    this.underWay.delete(delivery);
    const n = (this.held.get(endpointId) ?? 1) - 1;
    if (n > 0) this.held.set(endpointId, n);
    else this.held.delete(endpointId);
  }

  /** Endpoints holding `share` slots or more. */
  endpointsHolding(share: number): string[] {
    return [...this.held].filter(([, n]) => n >= share).map(([id]) => id);
  }
}

export class Relay {
  readonly stats: RelayStats = { delivered: 0, retried: 0, rejected: 0, gaveUp: 0, expired: 0, superseded: 0, held: 0 };
  private readonly options: Required<RelayOptions>;
  private running = false;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private readonly lanes = new Map<Platform, Lane>(WEBHOOK_PLATFORMS.map((p) => [p, new Lane()]));
  /** Aborted by stop() after its grace: attempts still under way end then, released for a retry at once. */
  private readonly stopping = new AbortController();
  /** Passes failed in a row (a store outage), and when one was last logged. */
  private failedPasses = 0;
  private failureLoggedAt = 0;
  private retentionSweep: NodeJS.Timeout | undefined;
  private readonly passesUnderWay = new Set<Promise<boolean>>();
  private sweeping: Promise<void> | undefined;

  constructor(options: RelayOptions) {
    this.options = {
      leaseMs: options.sender.attemptDeadlineMs + LEASE_MARGIN_MS,
      pollMs: 500,
      stopGraceMs: 5_000,
      batchSize: 64,
      maxInFlight: RELAY_SLOTS.perPlatform,
      maxInFlightPerEndpoint: RELAY_SLOTS.perEndpoint,
      observe: () => {},
      retentionSweepMs: 60_000,
      ...options,
    };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
    this.retentionSweep = setInterval(() => void this.sweepRetention(), this.options.retentionSweepMs);
    this.retentionSweep.unref();
  }

  /**
   * Prunes read messages past retention (the log's sweep yields between bounded batches, so requests
   * are served meanwhile); one sweep at a time.
   */
  sweepRetention(): Promise<void> {
    this.sweeping ??= this.options.store.messages
      .prune()
      .then(() => undefined)
      .catch((err: unknown) => this.options.logger.warn({ err }, 'message log sweep failed; retrying later'))
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** Starts the next pass now instead of after the poll interval. */
  wake(): void {
    this.wakeUp?.();
  }

  /** Stops claiming new work and waits for deliveries in flight to be acknowledged or rescheduled. */
  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.retentionSweep);
    await this.sweeping;
    this.wake();
    await this.loop;
    // Attempts under way may finish for a while; one may take 20 s, longer than shutdown may, so what
    // is still under way then is cut short and released: another instance (or this one restarted)
    // sends it again at once, under the same Idempotency-Key.
    let graceOver: NodeJS.Timeout | undefined;
    await Promise.race([this.settled(), new Promise<void>((resolve) => (graceOver = setTimeout(resolve, this.options.stopGraceMs)))]);
    clearTimeout(graceOver);
    this.stopping.abort();
    await this.settled();
  }

  /**
   * Resolves once the passes under way now have ended (a claim in progress may start deliveries),
   * and then the deliveries under way: acknowledged, rescheduled or dropped.
   */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.passesUnderWay]);
    await Promise.allSettled(this.underWay());
  }

  private underWay(): Promise<void>[] {
    return [...this.lanes.values()].flatMap((lane) => [...lane.underWay]);
  }

  private async run(): Promise<void> {
    while (this.running) {
      let more = false;
      try {
        more = await this.pass();
        this.passSucceeded();
      } catch (err) {
        this.passFailed(err);
      }
      if (!this.running) break;
      if (more) continue; // a full batch was claimed: more may be due now
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.retryDelay());
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  /**
   * While passes fail (the store is down), the first failure is logged with its error, then one line
   * a minute at most, and passes back off (the poll interval doubling up to 10 s) instead of logging
   * a stack trace twice a second; the recovery is logged once.
   */
  private passFailed(err: unknown): void {
    this.failedPasses++;
    const now = Date.now();
    if (this.failedPasses > 1 && now - this.failureLoggedAt < FAILURE_LOG_INTERVAL_MS) return;
    this.failureLoggedAt = now;
    this.options.logger.error({ err, failedPasses: this.failedPasses }, 'relay pass failed; retrying with backoff');
  }

  private passSucceeded(): void {
    if (this.failedPasses === 0) return;
    this.options.logger.info({ failedPasses: this.failedPasses }, 'relay passes succeed again');
    this.failedPasses = 0;
  }

  private retryDelay(): number {
    return this.failedPasses === 0 ? this.options.pollMs : Math.min(this.options.pollMs * 2 ** this.failedPasses, MAX_RETRY_DELAY_MS);
  }

  /** One pass (see claimAndStart), counted while under way so that settled() waits for its claim. */
  async pass(): Promise<boolean> {
    const running = this.claimAndStart();
    this.passesUnderWay.add(running);
    try {
      return await running;
    } finally {
      this.passesUnderWay.delete(running);
    }
  }

  /**
   * One pass: expire stale messages, then claim what is due to each webhook platform, as far as its
   * lane's free slots allow and passing over endpoints that hold their share of them (one claim for
   * all lanes), and start delivering it. Deliveries are not awaited: a webhook that answers slowly
   * (up to the sender's timeout) must delay neither other endpoints' deliveries nor the expiry of
   * their messages. Returns true when a lane claimed a full batch, so the caller runs the next pass
   * at once.
   */
  private async claimAndStart(): Promise<boolean> {
    await this.expireStale();
    const { maxInFlight, maxInFlightPerEndpoint, batchSize, store, leaseMs, clock } = this.options;
    const limits: Partial<Record<Platform, number>> = {};
    const skip: Partial<Record<Platform, string[]>> = {};
    for (const [platform, lane] of this.lanes) {
      const free = maxInFlight - lane.size;
      // Endpoints at their share wait for one of their attempts to end (which starts a pass).
      const full = lane.endpointsHolding(maxInFlightPerEndpoint);
      if (free > 0) limits[platform] = Math.min(batchSize, free);
      if (full.length > 0) skip[platform] = full;
    }
    const claimedAt = clock();
    const claimed = await store.deliveries.claim(claimedAt, leaseMs, limits, skip);
    const perLane = new Map<Platform, number>();
    for (const d of claimed) {
      // The outbox only holds deliveries to webhook platforms, each of which has a lane.
      this.track(this.lanes.get(d.platform)!, d.endpointId, this.deliver(d, claimedAt + leaseMs));
      perLane.set(d.platform, (perLane.get(d.platform) ?? 0) + 1);
    }
    return [...perLane].some(([platform, n]) => n === batchSize && limits[platform] === batchSize);
  }

  private count(event: keyof RelayStats): void {
    this.stats[event]++;
    this.options.observe(event);
  }

  private track(lane: Lane, endpointId: string, delivery: Promise<void>): void {
    const settled = delivery
      .catch((err: unknown) => this.options.logger.error({ err }, 'webhook delivery failed; retried after its lease'))
      .finally(() => {
        lane.remove(endpointId, settled);
        // The webhook's next message (its queue hands out one at a time) may be due now.
        if (this.running) this.wake();
      });
    lane.add(endpointId, settled);
  }

  /**
   * Whether a claimed delivery still applies, by the endpoint as it is now: its platform still has the
   * message to read (no bot relayed it meanwhile, it has not expired), `selfuse` is still on, and the
   * webhook it was queued for is still one of the platform's (a removed or replaced webhook is never
   * posted to). What is sent is the message as accepted, to that webhook: newer messages never change
   * what goes out under this message's key.
   */
  private async stillApplies(d: Delivery): Promise<boolean> {
    const current = await this.options.store.endpoints.get(d.endpointId);
    if (!current) return false;
    const { config } = current.record;
    const wanted = d.kind !== 'create' || stillUnread(current.state, d.seq, d.platform);
    return config['self-user'] && wanted && config.webhooks[d.platform].includes(d.url);
  }

  /**
   * The webhook call of a delivery: a create posts the message as accepted, a native reply naming the
   * webhook's copy of its target as the log knows it now (its create went before, in the same queue);
   * an edit or delete names the copy by the ID the webhook answered its create with (undefined when no
   * ID is known: the copy was never made, or the webhook did not say which it made, so there is
   * nothing to change).
   */
  private async callOf(d: Delivery): Promise<DeliveryCall | undefined> {
    if (d.kind === 'create') {
      const { payload, replyTo } = parseQueuedCreate(d.payload);
      if (replyTo === undefined) return { kind: 'create', payload };
      // Without a copy known now, the reference it was queued with (if any) stays.
      const target = await this.options.store.messages.get(d.endpointId, replyTo);
      return { kind: 'create', payload: withReplyReference(payload, currentReplyIds({}, target)[d.platform]) };
    }
    const messageId = (await this.options.store.messages.get(d.endpointId, d.seq))?.ids[d.platform];
    if (messageId === undefined) return undefined;
    return d.kind === 'edit' ? { kind: 'edit', messageId, payload: JSON.parse(d.payload) } : { kind: 'delete', messageId };
  }

  /**
   * Records a delivery the webhook accepted. A store error here must not lead to sending it again
   * (it would be, by any instance, when its lease runs out), so the write is retried, backing off,
   * for as long as the lease holds; only then is it given up, with an error logged. A pause the
   * webhook asked for (`holdUntil`: its rate limit's window is used up) is written in the same commit.
   */
  private async acknowledge(
    d: Delivery,
    log: Logger,
    leaseEnds: number,
    messageId: string | undefined,
    holdUntil: number | undefined,
  ): Promise<void> {
    // A create marks the message read by the platform and records the copy's ID the webhook answered
    // with (the ID even when the message was deleted meanwhile: the delete queued behind needs it).
    const ids = d.kind === 'create' && messageId !== undefined ? [{ number: d.seq, platform: d.platform, id: messageId }] : undefined;
    for (let attempt = 1, delayMs = ACK_RETRY_FIRST_MS; ; attempt++, delayMs = Math.min(delayMs * 2, ACK_RETRY_MAX_MS)) {
      try {
        await this.options.store.deliveries.complete(
          d,
          (row, stillQueued) => {
            if (!row || !stillQueued || d.kind !== 'create') return { result: undefined };
            const next = markRead(row, d.platform, d.seq);
            if (next.marked === undefined && ids === undefined) return { result: undefined };
            return { write: { ...next.row, messages: { ...next.messages, ...(ids && { ids }) } }, result: undefined };
          },
          holdUntil,
        );
        return;
      } catch (err) {
        // Given up when the lease would run out first, or on shutdown after its grace: logged by
        // track(), and sent again after the lease under the same key.
        if (this.stopping.signal.aborted || this.options.clock() + delayMs >= leaseEnds) throw err;
        log.warn({ err: { message: (err as Error).message }, attempt }, 'webhook delivered but not yet recorded; retrying the record');
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
  }

  private async expireStale(): Promise<void> {
    const { store, clock, messageTtlMs, logger } = this.options;
    const ids = await store.endpoints.listExpired(clock() - messageTtlMs, 100);
    for (const id of ids) {
      const expired = await store.endpoints.update(id, (row) => {
        if (!row || !isExpired(row, clock(), messageTtlMs)) return { result: [] };
        const outcome = expireMessages(row, { now: clock(), ttlMs: messageTtlMs });
        if (outcome.expired.length === 0) return { result: [] };
        return { write: { ...outcome.row, ...(outcome.messages && { messages: outcome.messages }) }, result: outcome.expired };
      });
      for (const { number, platforms } of expired) {
        this.count('expired');
        logger.warn({ endpoint: id, message: number, unread: platforms }, 'message expired before every platform read it');
      }
    }
  }

  /**
   * This platform will not get message `d.seq` through its webhook (refused, or out of time): its copy
   * is given up (expired in the log), so the webhook's queue goes on with the next message.
   */
  private async giveUp(d: Delivery): Promise<void> {
    // An edit or delete not made leaves the message as the log has it: only the call is given up.
    if (d.kind !== 'create') return this.options.store.deliveries.drop(d.id);
    await this.options.store.endpoints.update(d.endpointId, (row) => {
      if (!row) return { result: undefined };
      const outcome = expireMessages(row, { number: d.seq, platform: d.platform });
      if (outcome.expired.length === 0) return { result: undefined };
      return { write: { ...outcome.row, ...(outcome.messages && { messages: outcome.messages }) }, result: undefined };
    });
    await this.options.store.deliveries.drop(d.id);
  }

  /** Removes a delivery that will not be attempted, counted and logged (a warning when given up). */
  private async dropUnsent(d: Delivery, outcome: 'gaveUp' | 'superseded', why: string): Promise<void> {
    await this.options.store.deliveries.drop(d.id);
    this.count(outcome);
    const fields = { endpoint: d.endpointId, message: d.seq, platform: d.platform, call: d.kind };
    if (outcome === 'gaveUp') this.options.logger.warn(fields, why);
    else this.options.logger.info(fields, why);
  }

  /** `leaseEnds`: when another instance may claim `d` again (epoch ms). */
  private async deliver(d: Delivery, leaseEnds: number): Promise<void> {
    const { store, sender, logger, clock } = this.options;
    if (d.kind !== 'create' && clock() >= d.expiresAt) return this.dropUnsent(d, 'gaveUp', 'webhook copy change given up: out of time');
    const call = (await this.stillApplies(d)) ? await this.callOf(d) : undefined;
    if (call === undefined) return this.dropUnsent(d, 'superseded', 'webhook delivery no longer applies; dropped unsent');
    const log = logger.child({
      endpoint: d.endpointId,
      message: d.seq,
      platform: d.platform,
      call: d.kind,
      webhook: redactWebhookUrl(d.url),
      attempt: d.attempts,
    });
    let outcome: SendOutcome;
    try {
      outcome = await sender.deliver(d.url, call, idempotencyKey(d), this.stopping.signal);
    } catch (err) {
      outcome = { kind: 'retry', reason: err instanceof Error ? err.message : 'send failed' };
    }
    if (this.stopping.signal.aborted && outcome.kind === 'retry') {
      await store.deliveries.retry(d.id, clock()); // released: due now, no lease
      log.info('webhook delivery cut short by shutdown; released for a retry');
      return;
    }
    if (outcome.kind === 'delivered') {
      const holdUntil = outcome.holdMs !== undefined && outcome.holdMs > 0 ? clock() + outcome.holdMs : undefined;
      await this.acknowledge(d, log, leaseEnds, outcome.messageId, holdUntil);
      this.count('delivered');
      log.info({ status: outcome.status }, 'webhook delivered');
      if (holdUntil !== undefined) {
        this.count('held');
        log.info({ holdMs: outcome.holdMs }, 'webhook rate limit used up; its queue waits');
      }
      return;
    }
    if (outcome.kind === 'rejected') {
      await this.giveUp(d);
      this.count('rejected');
      log.warn({ status: outcome.status, reason: outcome.reason }, 'webhook delivery rejected; not retried');
      return;
    }
    const next = clock() + nextAttemptDelay(d.attempts, outcome.retryAfterMs);
    if (next >= d.expiresAt) {
      await this.giveUp(d);
      this.count('gaveUp');
      log.warn({ status: outcome.status, reason: outcome.reason }, 'webhook delivery given up: the message expires first');
      return;
    }
    await store.deliveries.retry(d.id, next);
    this.count('retried');
    log.info({ status: outcome.status, reason: outcome.reason, retryInMs: next - clock() }, 'webhook delivery will be retried');
  }
}
