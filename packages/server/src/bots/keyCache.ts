// The bot keys every record operation may be authenticated with, held in memory as their digests, so
// authenticating a bot key costs no database round trip. The bots are few (admin/bots.ts caps them),
// so the whole table is held. Changes made through this instance take effect at once (invalidate());
// changes made elsewhere (another instance sharing the PostgreSQL store, or the CLI beside a server)
// within BOT_KEYS_MAX_AGE_MS: the table is read again, once, by the first request that needs it after
// that age. A bounded age is used rather than change notifications: one small read every few seconds
// while bots are active, and no new kind of notification for every instance's feed to carry.
// A read that finds a bot's key changed or the bot gone tells `onRevoked`, so the streams opened with
// that key end here too; while such streams are open the table is read again as soon as its copy
// reaches BOT_KEYS_MAX_AGE_MS even without requests (watchRevocations), so they end within that bound
// (plus a tenth of it, and the read) on every instance.
import type { Platform } from '../domain/record.ts';
import type { Bots, StoredBot } from '../store/bots.ts';

/** How old the in-memory copy of the bots table may be when a bot key is checked: 5 seconds. */
export const BOT_KEYS_MAX_AGE_MS = 5000;

export interface BotIdentity {
  id: string;
  platform: Platform;
  keyHash: Uint8Array;
}

const digestKey = (digest: Uint8Array) => Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString('base64');

export class BotKeyCache {
  private byDigest = new Map<string, BotIdentity>();
  private loadedAt = Number.NEGATIVE_INFINITY;
  /** Incremented by every invalidation: a read that began before one is not taken as fresh. */
  private generation = 0;
  private loading: Promise<void> | undefined;
  private readonly store: Pick<Bots, 'list'>;
  private readonly clock: () => number;
  private readonly maxAgeMs: number;
  private readonly onRevoked: (bot: string) => void;

  constructor(store: Pick<Bots, 'list'>, options: { clock?: () => number; maxAgeMs?: number; onRevoked?: (bot: string) => void } = {}) {
    this.store = store;
    this.clock = options.clock ?? (() => Date.now());
    this.maxAgeMs = options.maxAgeMs ?? BOT_KEYS_MAX_AGE_MS;
    this.onRevoked = options.onRevoked ?? (() => {});
  }

  /**
   * Reads the table every max age while `active()` (streams opened with bot keys are open), so a key
   * rotated or deleted elsewhere ends its streams here within that bound; returns the function that
   * stops it.
   */
  watchRevocations(active: () => boolean): () => void {
    // Checked ten times per max age (a clock read while the copy is fresh), so a copy is read again
    // at most a tenth of the age after it expired.
    const timer = setInterval(() => {
      if (active()) this.fresh()?.catch(() => {}); // a failed read is retried at the next tick
    }, this.maxAgeMs / 10);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** undefined when the copy is fresh enough (no promise on the hot path), else the reload to await. */
  fresh(): Promise<void> | undefined {
    return this.isFresh() ? undefined : this.refresh();
  }

  private isFresh(): boolean {
    return this.clock() - this.loadedAt < this.maxAgeMs;
  }

  /** Reads until a read completes that no invalidation overtook (a read under way may predate one). */
  private async refresh(): Promise<void> {
    while (!this.isFresh()) await (this.loading ??= this.load().finally(() => (this.loading = undefined)));
  }

  /** The bot whose key has this SHA-256 digest, in the copy as it is now. */
  find(digest: Uint8Array): BotIdentity | undefined {
    return this.byDigest.get(digestKey(digest));
  }

  /** A bot was created, rotated or deleted through this instance: the next check reads the table again. */
  invalidate(): void {
    this.generation++;
    this.loadedAt = Number.NEGATIVE_INFINITY;
  }

  private async load(): Promise<void> {
    const generation = this.generation;
    const startedAt = this.clock();
    const bots: StoredBot[] = await this.store.list();
    // A read that an invalidation overtook may hold a key that no longer works: it is dropped.
    if (generation !== this.generation) return;
    const before = this.byDigest;
    this.byDigest = new Map(bots.map((b) => [digestKey(b.keyHash), { id: b.id, platform: b.platform, keyHash: b.keyHash }]));
    this.loadedAt = startedAt; // its age runs from when it began
    // A key that was here and is not now: its bot was rotated or deleted.
    for (const [digest, bot] of before) if (!this.byDigest.has(digest)) this.onRevoked(bot.id);
  }
}
