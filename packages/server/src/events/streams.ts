// What the event streams of one server instance share: the change feed, the settings, the set of
// open streams (so shutdown can end them instead of waiting for clients that never hang up), and the
// periodic sweep of the event log.
import type { Logger } from '../logger.ts';
import type { EndpointStore } from '../store/port.ts';
import type { ChangeFeed } from '../store/changeFeed.ts';
import { ChangeReader } from './changeReader.ts';
import { SlowStreamBudget } from './slowStreams.ts';
import { TurnQueue } from './turns.ts';

export interface EventStreamSettings {
  /** A comment line this often keeps proxies from closing idle streams (default 15 s). */
  heartbeatMs: number;
  /** Reconnection delay announced to clients in the `retry:` field (default 2 s). */
  retryMs: number;
  /** Events read from the log per query while replaying or catching up (default 100). */
  batchSize: number;
  /**
   * Bytes of record JSON one read of the log returns at most (default 256 KiB); a larger record is
   * read alone. A stream holds at most one read's events, and reading them blocks the event loop
   * (SQLite) for a millisecond or two; the stream yields to other work between reads.
   */
  replayBatchBytes: number;
  /**
   * Bytes all slow streams of this process may hold together (default 64 MiB): queued for a client
   * that has not taken them yet, plus events read and not yet written. Past it, the streams holding
   * the most are ended (see slowStreams.ts); their clients resume with Last-Event-ID.
   */
  slowStreamBudgetBytes: number;
  /** How often events past the age limit are deleted from every endpoint's log (default 60 s). */
  sweepMs: number;
  /**
   * Streams one endpoint may have open on this instance at once with its token or the admin token
   * (default 20); more get 429. Streams opened with a bot key never count here (see maxPerBotKey).
   */
  maxPerEndpoint: number;
  /**
   * Per-endpoint streams one bot key may have open on this instance at once, over all endpoints
   * (default 1,000, the connections one address may hold); more get 429. They count against the key,
   * so a key never takes an endpoint's own slots.
   */
  maxPerBotKey: number;
  /**
   * A stream that has waited this long for its client to take what was written (one event at most,
   * beyond the socket's buffers) is ended (default 60 s, checked at each heartbeat): the client
   * reconnects with Last-Event-ID when it reads again. The kernel's buffers hide a client reading
   * slowly from one reading nothing, so a client must take at least an event a minute.
   */
  stallMs: number;
}

export const DEFAULT_EVENT_STREAM_SETTINGS: EventStreamSettings = {
  heartbeatMs: 15_000,
  retryMs: 2000,
  batchSize: 100,
  replayBatchBytes: 256 * 1024,
  slowStreamBudgetBytes: 64 * 1024 * 1024,
  sweepMs: 60_000,
  maxPerEndpoint: 20,
  maxPerBotKey: 1000,
  stallMs: 60_000,
};

export class EventStreams {
  readonly feed: ChangeFeed;
  readonly settings: EventStreamSettings;
  /** What the slow streams of this process hold together, and the budget that bounds it. */
  readonly slow: SlowStreamBudget;
  /** The streams' reads of the log: one at a time, one starting per turn of the event loop. */
  readonly turns = new TurnQueue();
  private readonly open = new Set<() => void>();
  /** Open streams opened with each bot's key, by the functions that end them. */
  private readonly perBot = new Map<string, Set<() => void>>();
  /** Open streams per endpoint: each holds a socket, so one tenant must not take them all. */
  private readonly perEndpoint = new Map<string, number>();
  private ending = false;
  private changeReader: ChangeReader | undefined;

  constructor(feed: ChangeFeed, settings: Partial<EventStreamSettings> = {}) {
    this.feed = feed;
    this.settings = { ...DEFAULT_EVENT_STREAM_SETTINGS, ...settings };
    this.slow = new SlowStreamBudget(this.settings.slowStreamBudgetBytes);
  }

  /** The reads of the change log shared by this instance's streams of all changes (changeReader.ts). */
  allChanges(store: EndpointStore): ChangeReader {
    return (this.changeReader ??= new ChangeReader(store, this.feed, this.turns, this.settings));
  }

  /** True once shutdown began: new streams end at once (their clients reconnect elsewhere). */
  get closed(): boolean {
    return this.ending;
  }

  /** Streams open now. */
  get size(): number {
    return this.open.size;
  }

  /**
   * True when `endpointId` has as many streams open here as it may. The streams of all changes count
   * under a key of their own per credential (one that no endpoint ID can be: see allChangesKey).
   */
  full(endpointId: string, limit: number = this.settings.maxPerEndpoint): boolean {
    return (this.perEndpoint.get(endpointId) ?? 0) >= limit;
  }

  /** Whether any stream opened with a bot key is open here (the bot keys are then re-read periodically). */
  get hasBotStreams(): boolean {
    return this.perBot.size > 0;
  }

  /**
   * Registers an open stream by the function that ends it (`bot`: the bot whose key opened it);
   * returns the function that forgets it.
   */
  track(end: () => void, endpointId: string, bot?: string): () => void {
    this.open.add(end);
    this.perEndpoint.set(endpointId, (this.perEndpoint.get(endpointId) ?? 0) + 1);
    if (bot !== undefined) {
      let ends = this.perBot.get(bot);
      if (!ends) this.perBot.set(bot, (ends = new Set()));
      ends.add(end);
    }
    let forgotten = false;
    return () => {
      if (forgotten) return;
      forgotten = true;
      this.open.delete(end);
      if (bot !== undefined) {
        const ends = this.perBot.get(bot);
        ends?.delete(end);
        if (ends?.size === 0) this.perBot.delete(bot);
      }
      const left = (this.perEndpoint.get(endpointId) ?? 1) - 1;
      if (left > 0) this.perEndpoint.set(endpointId, left);
      else this.perEndpoint.delete(endpointId);
    };
  }

  /** Ends the streams opened with `bot`'s key on this instance (its key was rotated or deleted). */
  endBot(bot: string): void {
    for (const end of [...(this.perBot.get(bot) ?? [])]) end();
  }

  /** Ends every open stream and every one opened from now on. */
  endAll(): void {
    this.ending = true;
    for (const end of [...this.open]) end();
  }
}

export interface EventsRuntime {
  streams: EventStreams;
  /** Ends the streams, stops the sweep and closes the change feed. */
  close(): Promise<void>;
}

/** Opens the store's change feed and starts the sweep of old events. */
export async function startEvents(options: {
  store: EndpointStore;
  logger: Logger;
  settings?: Partial<EventStreamSettings>;
}): Promise<EventsRuntime> {
  const { store, logger } = options;
  const feed = await store.changes.openFeed({
    onError: (err) => logger.warn({ err: { message: err.message } }, 'change feed connection lost; reconnecting'),
  });
  const streams = new EventStreams(feed, options.settings);
  let sweeping: Promise<unknown> | undefined;
  const sweep = setInterval(() => {
    sweeping ??= store.changes
      .prune()
      .catch((err: unknown) => logger.warn({ err }, 'event log sweep failed; retrying later'))
      .finally(() => (sweeping = undefined));
  }, streams.settings.sweepMs);
  sweep.unref();
  return {
    streams,
    async close() {
      streams.endAll();
      clearInterval(sweep);
      await sweeping;
      await feed.close();
    },
  };
}
