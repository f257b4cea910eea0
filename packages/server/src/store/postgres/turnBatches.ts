// The PostgreSQL adapter's batching by event-loop turn: the reads of one turn go as one query and its
// compare-and-set writes commit in one transaction. On this 2-core benchmark machine a query and its
// round trip per request were most of a GET's cost, and notifying writes committed one at a time
// (see `write`). DataLoader collects the calls of a turn (its cache is off: every read runs after its
// request arrived, so it sees every write acknowledged before, by any instance).
import DataLoader from 'dataloader';
import type pg from 'pg';
import { queueJson } from '../../domain/messageQueue.ts';
import type { StoredEndpoint } from '../endpoints.ts';
import { type EndpointRow, toStored } from '../sql/rows.ts';
import { CHANGES_CHANNEL } from './changeFeed.ts';
import { prepared } from './database.ts';
import type { Write } from './rowWrites.ts';

/** Reads sent as one query, and writes committed as one transaction, at most. */
const READ_BATCH = 500;
const WRITE_BATCH = 100;

const SQL = {
  getMany:
    'SELECT id, token_hash, record, message_seq, pending_since, version, queue, last_change FROM endpoints WHERE id = ANY($1::text[])',
  // `write` for several endpoints at once, one array per column ($1-$7 and the queue summaries $15, one
  // element per endpoint, each ID once), the event time $8, the window $9 and the deliveries ($10-$14, one element per delivery,
  // $10 naming its endpoint). The rows are locked in ID order first, so that two instances' statements
  // cannot deadlock. Returns the IDs written.
  writeMany: `WITH input AS (
            SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bytea[], $15::text[])
              AS i (id, record, seq, pending_since, pending_seq, expect_version, expect_token, queue)
          ), locked AS MATERIALIZED (
            SELECT id FROM endpoints WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE
          ), written AS (
            UPDATE endpoints e SET record = i.record, message_seq = i.seq, pending_since = i.pending_since, version = e.version + 1,
                                   queue = i.queue, last_change = 'record', updated_at = now()
            FROM input i JOIN locked l ON l.id = i.id
            WHERE e.id = i.id AND e.version = i.expect_version AND e.token_hash = i.expect_token
            RETURNING e.id, e.version, i.record, i.seq, i.pending_seq
          ), stale AS (
            DELETE FROM outbox o USING written w
            WHERE o.endpoint_id = w.id AND w.pending_seq IS NULL AND o.kind = 'create' AND o.lease_until <= $8::bigint
          ), logged AS (
            INSERT INTO endpoint_events (endpoint_id, version, record, created_at, message_number) SELECT id, version, record, $8::bigint, pending_seq FROM written
          ), pruned AS (
            DELETE FROM endpoint_events ev USING written w WHERE ev.endpoint_id = w.id AND ev.version <= w.version - $9::bigint
          ), queued AS (
            INSERT INTO outbox (endpoint_id, message_seq, platform, url, payload, next_attempt_at, expires_at)
            SELECT w.id, w.seq, d.platform, d.url, d.payload, 0, d.expires_at
            FROM written w
            JOIN unnest($10::text[], $11::text[], $12::text[], $13::text[], $14::bigint[]) AS d (endpoint_id, platform, url, payload, expires_at)
              ON d.endpoint_id = w.id
            ON CONFLICT DO NOTHING
          )
          SELECT id, pg_notify('${CHANGES_CHANNEL}', id || ':' || version::text) FROM written`,
} as const;

/** A compare-and-set write: what `decide` decided about `current`. */
export interface PendingWrite {
  id: string;
  current: StoredEndpoint;
  write: Write;
}

/** What the batches need from the adapter. */
export interface TurnBatchDeps {
  pool: pg.Pool;
  /** BEGIN ... COMMIT on one pooled connection; ROLLBACK and rethrow on any error. */
  transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** One endpoint's read, as a statement of its own. */
  readOne(id: string): Promise<StoredEndpoint | undefined>;
  /** One compare-and-set write, on its own or inside the caller's transaction: false if the row changed. */
  writeOne(db: pg.Pool | pg.PoolClient, w: PendingWrite): Promise<boolean>;
  /** The write's message-log writes, inside the transaction that wrote its row. */
  applyMessages(client: pg.PoolClient, w: PendingWrite): Promise<void>;
  clock(): number;
  maxEvents: number;
}

const statement = (key: keyof typeof SQL, values: unknown[]) => prepared(key, SQL[key], values);

export class TurnBatches {
  private readonly deps: TurnBatchDeps;
  private readonly reads: DataLoader<string, StoredEndpoint | undefined>;
  private readonly writes: DataLoader<PendingWrite, boolean>;

  constructor(deps: TurnBatchDeps) {
    this.deps = deps;
    const perTurn = { cache: false, batchScheduleFn: (run: () => void) => setImmediate(run) };
    this.reads = new DataLoader((ids) => this.readMany(ids), { ...perTurn, maxBatchSize: READ_BATCH });
    this.writes = new DataLoader((batch) => this.writeMany(batch), { ...perTurn, maxBatchSize: WRITE_BATCH });
  }

  read(id: string): Promise<StoredEndpoint | undefined> {
    return this.reads.load(id);
  }

  /**
   * Commits the write if the row still has `current`'s version and token digest; false otherwise. The
   * writes of one turn commit in one transaction: PostgreSQL holds a global lock from the commit of a
   * transaction that notifies until its WAL flush is done, so notifying transactions commit one at a
   * time (a one-row update with NOTIFY: 2.0-2.2k/s against 5.4k/s without, 50 clients); the turn's
   * writes take it once. Rows are locked in ID order, so two instances' batches cannot deadlock.
   */
  write(w: PendingWrite): Promise<boolean> {
    return this.writes.load(w);
  }

  private async readMany(ids: readonly string[]): Promise<(StoredEndpoint | undefined)[]> {
    if (ids.length === 1) return [await this.deps.readOne(ids[0]!)];
    const { rows } = await this.deps.pool.query<EndpointRow & { id: string }>(statement('getMany', [ids]));
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => toStored(byId.get(id)));
  }

  /** One write on its own: its row in one statement, or with its message-log writes in one transaction. */
  private alone(w: PendingWrite): Promise<boolean> {
    if (!w.write.messages) return this.deps.writeOne(this.deps.pool, w);
    return this.deps.transaction(async (client) => {
      if (!(await this.deps.writeOne(client, w))) return false;
      await this.deps.applyMessages(client, w);
      return true;
    });
  }

  /**
   * The turn's writes, their message-log writes (messages accepted, marks, IDs) in the same
   * transaction: one commit for the turn, where a transaction per message would take the notify lock
   * (see `write`) once per message.
   */
  private async writeMany(batch: readonly PendingWrite[]): Promise<(boolean | Error)[]> {
    if (batch.length === 1) return [await this.alone(batch[0]!)];
    const rounds = inRounds(batch);
    const logs = batch.some((w) => w.write.messages !== undefined);
    const run = async (db: pg.Pool | pg.PoolClient) => {
      const written = new Array<boolean>(batch.length).fill(false);
      for (const round of rounds) {
        const writes = round.map((i) => batch[i]!);
        const done = await this.writeRound(db, writes);
        for (const i of round) written[i] = done.has(batch[i]!.id);
        // Inside the transaction (`logs` makes it one): only writes whose row was written log anything.
        for (const w of writes) if (w.write.messages && done.has(w.id)) await this.deps.applyMessages(db as pg.PoolClient, w);
      }
      return written;
    };
    try {
      // One statement is a transaction of its own: a batch that names each endpoint once and writes
      // no message log (a turn of settings) needs no BEGIN and COMMIT round trips around it.
      return await (rounds.length === 1 && !logs ? run(this.deps.pool) : this.deps.transaction(run));
    } catch {
      // One write failed and took the batch with it: each on its own, so only that one fails.
      return Promise.all(batch.map((w) => this.alone(w).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))))));
    }
  }

  /** One writeMany statement (each endpoint once): the IDs it wrote. */
  private async writeRound(db: pg.Pool | pg.PoolClient, writes: PendingWrite[]): Promise<Set<string>> {
    const column = <V>(get: (w: PendingWrite) => V) => writes.map(get);
    const deliveries = writes.flatMap((w) => (w.write.deliveries ?? []).map((d) => ({ id: w.id, ...d })));
    const params = [
      column((w) => w.id),
      column((w) => w.write.recordJson ?? JSON.stringify(w.write.record)),
      column((w) => w.write.state.seq),
      column((w) => w.write.state.pendingSince),
      column((w) => (w.write.state.pendingSince === null ? null : w.write.state.seq)),
      column((w) => w.current.version),
      column((w) => Buffer.from(w.current.tokenHash)),
      this.deps.clock(),
      this.deps.maxEvents,
      deliveries.map((d) => d.id),
      deliveries.map((d) => d.platform),
      deliveries.map((d) => d.url),
      deliveries.map((d) => d.payload),
      deliveries.map((d) => d.expiresAt),
      column((w) => queueJson(w.write.state.queue)),
    ];
    const { rows } = await db.query<{ id: string }>(statement('writeMany', params));
    return new Set(rows.map((r) => r.id));
  }
}

/**
 * The batch's indices in rounds of one statement each, every endpoint at most once per round: a
 * second write of an endpoint goes in the next round (where it fails its compare-and-set if it was
 * decided on the same row as the first).
 */
function inRounds(batch: readonly PendingWrite[]): number[][] {
  const rounds: number[][] = [];
  let rest = batch.map((_, i) => i);
  while (rest.length > 0) {
    const ids = new Set<string>();
    const round: number[] = [];
    const later: number[] = [];
    for (const i of rest) {
      if (ids.has(batch[i]!.id)) later.push(i);
      else {
        ids.add(batch[i]!.id);
        round.push(i);
      }
    }
    rounds.push(round);
    rest = later;
  }
  return rounds;
}
