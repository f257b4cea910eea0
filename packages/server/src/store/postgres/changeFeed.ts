// The change feed across instances: every write transaction of the PostgreSQL store calls
// pg_notify(CHANGES_CHANNEL, '<endpointId>:<version>'), which PostgreSQL delivers when (and only if)
// the transaction commits, in commit order. Each instance keeps one dedicated connection that
// LISTENs on the channel and tells its subscribers. The payload stays small (an ID and a number):
// subscribers read the records back from the event log.
//
// Notifications sent while no connection listens are lost, so after every (re)connection every
// subscriber is told to look again; a subscriber that reads "everything after my last version" then
// catches up. A dropped connection is reopened with backoff; a silent one is found by a periodic
// check query.
import pg from 'pg';
import { type ChangeFeed, type ChangeListener, Subscribers } from '../changeFeed.ts';
import { DEFAULT_CONNECT_TIMEOUT_MS } from './database.ts';

export const CHANGES_CHANNEL = 'chatbridge_changes';

export interface PostgresChangeFeedOptions {
  connectionString: string;
  /** Opening the connection fails after this (default {@link DEFAULT_CONNECT_TIMEOUT_MS}). */
  connectionTimeoutMs?: number;
  /** Reconnection delays double from `minMs` to `maxMs` (defaults 100 ms and 10 s), with jitter. */
  reconnect?: { minMs?: number; maxMs?: number };
  /** How often the idle connection is checked with a query (default 30 s). */
  healthCheckMs?: number;
  /** Told of every connection failure; the feed reconnects by itself. */
  onError?: (err: Error) => void;
}

/** Parses `<endpointId>:<version>`; endpoint IDs never contain a colon. */
export function parseNotice(payload: string | undefined): { endpointId: string; version: number } | undefined {
  const at = payload?.lastIndexOf(':') ?? -1;
  if (!payload || at <= 0) return undefined;
  const version = Number(payload.slice(at + 1));
  return Number.isSafeInteger(version) ? { endpointId: payload.slice(0, at), version } : undefined;
}

export class PostgresChangeFeed implements ChangeFeed {
  private readonly options: PostgresChangeFeedOptions;
  private readonly subscribers = new Subscribers();
  private client: pg.Client | undefined;
  private closed = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private healthTimer: NodeJS.Timeout | undefined;
  private connecting: Promise<void> | undefined;
  /** Connections made so far (for tests and diagnostics). */
  connections = 0;

  /** Starts listening; resolves once the first attempt succeeded or failed (it then keeps retrying). */
  static async start(options: PostgresChangeFeedOptions): Promise<PostgresChangeFeed> {
    const feed = new PostgresChangeFeed(options);
    await feed.connect();
    return feed;
  }

  private constructor(options: PostgresChangeFeedOptions) {
    this.options = options;
  }

  /** True while a connection is listening. */
  get listening(): boolean {
    return this.client !== undefined;
  }

  subscribe(endpointId: string, listener: ChangeListener): () => void {
    return this.subscribers.add(endpointId, listener);
  }

  subscribeAll(listener: (endpointId: string | undefined, version: number | undefined) => void): () => void {
    return this.subscribers.addAll(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.healthTimer);
    this.subscribers.clear();
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private connect(): Promise<void> {
    this.connecting = this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      connectionTimeoutMillis: this.options.connectionTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      keepAlive: true,
      application_name: 'chatbridge-listen',
    });
    let failed = false;
    const fail = (err: Error) => {
      if (failed || this.closed) return;
      failed = true;
      if (this.client === client) this.client = undefined;
      clearInterval(this.healthTimer);
      client.end().catch(() => undefined);
      this.options.onError?.(err);
      this.scheduleReconnect();
    };
    client.on('error', fail);
    client.on('end', () => fail(new Error('the LISTEN connection closed')));
    client.on('notification', (message) => {
      const notice = message.channel === CHANGES_CHANNEL ? parseNotice(message.payload) : undefined;
      if (notice) this.subscribers.notify(notice.endpointId, notice.version);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (error) {
      fail(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (this.closed || failed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.connections++;
    this.failures = 0;
    this.watch(client, fail);
    // Whatever committed while nothing listened (or before this first LISTEN) was not heard.
    this.subscribers.notifyAll();
  }

  /** A connection can die without a word (a network partition): a query with a deadline finds out. */
  private watch(client: pg.Client, fail: (err: Error) => void): void {
    const every = this.options.healthCheckMs ?? 30_000;
    this.healthTimer = setInterval(() => {
      const deadline = setTimeout(() => fail(new Error('the LISTEN connection stopped answering')), Math.min(every, 5000));
      client.query('SELECT 1').then(
        () => clearTimeout(deadline),
        (err: unknown) => {
          clearTimeout(deadline);
          fail(err instanceof Error ? err : new Error(String(err)));
        },
      );
    }, every);
    this.healthTimer.unref();
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    const min = this.options.reconnect?.minMs ?? 100;
    const max = this.options.reconnect?.maxMs ?? 10_000;
    const ceiling = Math.min(max, min * 2 ** this.failures++);
    const delay = ceiling / 2 + Math.random() * (ceiling / 2);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
  }
}
