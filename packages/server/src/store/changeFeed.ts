// Change notifications: "endpoint X may have changed", told to whoever streams X. A notification
// carries no record: subscribers read the committed changes back from the store's event log, so a
// lost, late or repeated notification can never put a wrong record on the wire, only delay one.
//
// Two implementations: ChangeHub below, in process (the SQLite store publishes to it after each
// commit), and PostgresChangeFeed (postgres/changeFeed.ts), which hears every instance's commits via LISTEN.

/**
 * Told that an endpoint may have changed. `version` is the endpoint's version when the notice was
 * sent (its newest event, or its current one for a token rotation or a deletion); undefined when
 * notices may have been lost (the feed reconnected) and every subscriber should look again.
 */
export type ChangeListener = (version: number | undefined) => void;

export interface ChangeFeed {
  /** Starts telling `listener` about changes of `endpointId`; returns the function that stops it. */
  subscribe(endpointId: string, listener: ChangeListener): () => void;
  /**
   * Starts telling `listener` about changes of every endpoint (the stream of all changes): the
   * endpoint's ID and version, or (undefined, undefined) when notices may have been lost.
   */
  subscribeAll(listener: (endpointId: string | undefined, version: number | undefined) => void): () => void;
  /** Stops every subscription and releases what the feed holds (a database connection). */
  close(): Promise<void>;
}

/** Subscribers by endpoint; the bookkeeping both feeds share. */
export class Subscribers {
  private readonly byEndpoint = new Map<string, Set<ChangeListener>>();
  private readonly everything = new Set<(endpointId: string | undefined, version: number | undefined) => void>();

  addAll(listener: (endpointId: string | undefined, version: number | undefined) => void): () => void {
    const entry = (endpointId: string | undefined, version: number | undefined) => listener(endpointId, version);
    this.everything.add(entry);
    return () => void this.everything.delete(entry);
  }

  add(endpointId: string, listener: ChangeListener): () => void {
    let set = this.byEndpoint.get(endpointId);
    if (!set) this.byEndpoint.set(endpointId, (set = new Set()));
    // A wrapper per subscription, so one listener subscribed twice is also unsubscribed twice.
    const entry: ChangeListener = (version) => listener(version);
    set.add(entry);
    return () => {
      const current = this.byEndpoint.get(endpointId);
      if (!current?.delete(entry)) return;
      if (current.size === 0) this.byEndpoint.delete(endpointId);
    };
  }

  /** Tells the subscribers of one endpoint. A throwing listener does not keep the others from hearing. */
  notify(endpointId: string, version: number | undefined): void {
    for (const listener of [...(this.byEndpoint.get(endpointId) ?? [])]) safely(listener, version);
    for (const listener of [...this.everything]) safely(() => listener(endpointId, version), undefined);
  }

  /** Tells every subscriber (notices may have been lost). */
  notifyAll(): void {
    for (const set of [...this.byEndpoint.values()]) for (const listener of [...set]) safely(listener, undefined);
    for (const listener of [...this.everything]) safely(() => listener(undefined, undefined), undefined);
  }

  clear(): void {
    this.byEndpoint.clear();
    this.everything.clear();
  }

  get size(): number {
    let n = this.everything.size;
    for (const set of this.byEndpoint.values()) n += set.size;
    return n;
  }
}

function safely(listener: ChangeListener, version: number | undefined): void {
  try {
    listener(version);
  } catch {
    // A listener only schedules work; it has no caller to report to.
  }
}

/**
 * The in-process feed: the store publishes after each commit, in the process that committed. Writes
 * another process makes to the same file (the CLI rotating or deleting) name no endpoint: the SQLite
 * store notices them and has every subscriber look again (`publishToAll`).
 */
export class ChangeHub {
  private readonly subscribers = new Subscribers();

  publish(endpointId: string, version: number): void {
    this.subscribers.notify(endpointId, version);
  }

  /** Something changed, endpoint unknown: every subscriber looks again. */
  publishToAll(): void {
    this.subscribers.notifyAll();
  }

  /** A feed over this hub; closing it drops only its own subscriptions. */
  feed(): ChangeFeed {
    const mine = new Set<() => void>();
    return {
      subscribe: (endpointId, listener) => {
        const off = this.subscribers.add(endpointId, listener);
        const unsubscribe = () => {
          mine.delete(unsubscribe);
          off();
        };
        mine.add(unsubscribe);
        return unsubscribe;
      },
      subscribeAll: (listener) => {
        const off = this.subscribers.addAll(listener);
        const unsubscribe = () => {
          mine.delete(unsubscribe);
          off();
        };
        mine.add(unsubscribe);
        return unsubscribe;
      },
      close: async () => {
        for (const unsubscribe of [...mine]) unsubscribe();
      },
    };
  }
}
