// The PostgreSQL adapter: the shared store contract, plus what only a shared database shows (several
// pools as several instances, migrations racing, timeouts). Runs whenever DATABASE_URL is set; each
// run works in a scratch database of its own and drops it at the end.
import { execFileSync } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { initialRecord, type EndpointRecord } from '../../src/domain/record.ts';
import type { ChangeFeed } from '../../src/store/changeFeed.ts';
import { PostgresEndpointStore, type PostgresStoreOptions, loadMigrations, migrate } from '../../src/store/postgres/store.ts';
import type { MessageState, StoredEndpoint } from '../../src/store/port.ts';
import { hashToken, tokenMatchesDigest } from '../../src/tokens.ts';
import { describeStoreContract } from './contract.ts';
import { createScratchDatabase, type ScratchDatabase, withClient } from './pgScratch.ts';

const BASE_URL = process.env.DATABASE_URL;

/** The state of an endpoint whose newest message `seq`, accepted at `at`, chat_a and chat_b have still to read. */
const pendingState = (seq: number, at: number): MessageState => ({ seq, pendingSince: at, queue: [{ n: seq, u: 3, at, b: 2 }] });

describe('PostgreSQL configuration', () => {
  const env = { CHATBRIDGE_STORE: 'postgres' };

  it('when CHATBRIDGE_STORE=postgres has no DATABASE_URL, then the configuration is refused naming it', () => {
    expect(() => loadConfig(env)).toThrow(/DATABASE_URL: required when CHATBRIDGE_STORE=postgres/);
  });

  it('when DATABASE_URL is not a postgres URL, then the configuration is refused without echoing it', () => {
    const attempt = () => loadConfig({ ...env, DATABASE_URL: 'mysql://root:hunter2@db/x' });
    expect(attempt).toThrow(/DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/);
    expect(attempt).not.toThrow(/hunter2/);
  });

  it('when DATABASE_URL is given, then the store is postgres with a pool of 10 unless CHATBRIDGE_PG_POOL_SIZE says otherwise', () => {
    const url = 'postgres://app:pw@db.internal:5432/chatbridge';
    expect(loadConfig({ ...env, DATABASE_URL: url }).store).toEqual({ kind: 'postgres', databaseUrl: url, poolSize: 10 });
    expect(loadConfig({ ...env, DATABASE_URL: url, CHATBRIDGE_PG_POOL_SIZE: '25' }).store).toMatchObject({ poolSize: 25 });
    expect(() => loadConfig({ ...env, DATABASE_URL: url, CHATBRIDGE_PG_POOL_SIZE: '0' })).toThrow(/CHATBRIDGE_PG_POOL_SIZE/);
  });

  it('when CHATBRIDGE_STORE=sqlite, then an unrelated DATABASE_URL is ignored', () => {
    expect(loadConfig({ CHATBRIDGE_STORE: 'sqlite', DATABASE_URL: 'mysql://elsewhere/x' }).store).toEqual({
      kind: 'sqlite',
      sqlitePath: './data/chatbridge.sqlite',
    });
  });
});

describe.runIf(!!BASE_URL)('PostgreSQL store', () => {
  let db: ScratchDatabase;
  /** One admin connection to the scratch database, for resetting it and looking at raw rows. */
  let admin: pg.Client;
  const extraDatabases: ScratchDatabase[] = [];

  beforeAll(async () => {
    db = await createScratchDatabase(BASE_URL!);
    const bootstrap = await PostgresEndpointStore.open({ connectionString: db.url });
    await bootstrap.close();
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });

  afterAll(async () => {
    await admin?.end();
    await db?.drop();
    for (const extra of extraDatabases) await extra.drop();
  });

  /** A store on empty tables (the tables of the one scratch database are truncated). */
  const fresh = async (options: Partial<PostgresStoreOptions> = {}) => {
    await admin.query(
      'TRUNCATE channel_index, endpoint_events, outbox, webhook_holds, message_ids, messages, endpoints, bots, change_log RESTART IDENTITY',
    );
    return PostgresEndpointStore.open({ connectionString: db.url, ...options });
  };

  /** A database of its own, not migrated yet. */
  const emptyDatabase = async () => {
    const extra = await createScratchDatabase(BASE_URL!);
    extraDatabases.push(extra);
    return extra;
  };

  describeStoreContract('postgres', (options) => fresh(options));

  describe('webhook queues across instances', () => {
    it('when messages are queued while two instances deliver and drop entries of the same webhooks, then each webhook still hands out exactly its oldest entry, in order', async () => {
      const first = await fresh();
      const second = await PostgresEndpointStore.open({ connectionString: db!.url });
      try {
        const ids = ['ep-1', 'ep-2'];
        for (const id of ids) await first.endpoints.create(id, hashToken('t'), initialRecord());
        const draft = (platform: 'chat_a' | 'chat_b') => ({
          platform,
          url: `https://hooks.example.com/${platform}`,
          payload: '{}',
          expiresAt: 10_000_000,
        });
        const pend = (store: PostgresEndpointStore, id: string) =>
          store.endpoints.update(id, (cur) => {
            const seq = cur!.state.seq + 1;
            return {
              write: {
                record: cur!.record,
                state: {
                  seq,
                  pendingSince: cur!.state.pendingSince ?? 1000,
                  queue: [...cur!.state.queue, { n: seq, u: 3, at: 1000, b: 2 }],
                },
                deliveries: [draft('chat_a'), draft('chat_b')],
              },
              result: undefined,
            };
          });
        const handed = new Map<string, number[]>();
        let writing = true;
        const deliver = async (store: PostgresEndpointStore, drop: boolean) => {
          // A webhook left with no head would never be handed out again: stop at a deadline, so the
          // assertion below names what is missing instead of the test timing out.
          const deadline = Date.now() + 15_000;
          while ((writing || (await store.deliveries.count()) > 0) && Date.now() < deadline) {
            const claimed = await store.deliveries.claim(2000, 60_000, 4);
            for (const d of claimed) {
              const key = `${d.endpointId} ${d.platform}`;
              handed.set(key, [...(handed.get(key) ?? []), d.seq]);
              if (drop) await store.deliveries.drop(d.id);
              else await store.deliveries.complete(d, () => ({ result: undefined }));
            }
            if (claimed.length === 0) await new Promise((resolve) => setTimeout(resolve, 2));
          }
        };
        const writers = Promise.all(
          [first, second].flatMap((store) =>
            ids.map(async (id) => {
              for (let i = 0; i < 15; i++) await pend(store, id);
            }),
          ),
        );
        const workers = Promise.all([deliver(first, false), deliver(second, true)]);
        await writers;
        writing = false;
        await workers;
        for (const id of ids) {
          for (const platform of ['chat_a', 'chat_b']) {
            expect(handed.get(`${id} ${platform}`)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
          }
        }
      } finally {
        await second.close();
        await first.close();
      }
    });
  });

  describe('change log order', () => {
    it('when a write that began first commits after a later one, then a reader past the later one still gets the earlier one next', async () => {
      const store = await fresh();
      const inFlight = new pg.Client({ connectionString: db!.url });
      await inFlight.connect();
      try {
        for (const id of ['ep-1', 'ep-2']) await store.endpoints.create(id, hashToken('t'), initialRecord());
        // A write of ep-1 in flight: its event is inserted, its transaction not yet committed.
        await inFlight.query('BEGIN');
        await inFlight.query(`UPDATE endpoints SET version = 1 WHERE id = 'ep-1'`);
        await inFlight.query(`INSERT INTO endpoint_events (endpoint_id, version, record, created_at) VALUES ('ep-1', 1, $1, $2)`, [
          JSON.stringify(initialRecord()),
          Date.now(),
        ]);
        // A write of ep-2 begins later and commits first.
        await store.endpoints.update('ep-2', (cur) => ({ write: { record: cur!.record, state: cur!.state }, result: undefined }));
        const first = await store.changes.changesSince(0, 10);
        expect(first.entries.map((e) => `${e.endpointId}@${e.version}`)).toEqual(['ep-2@1']);
        await inFlight.query('COMMIT');
        // The reader goes on after the last position it got: ep-1's change comes after it, not before.
        const next = await store.changes.changesSince(first.entries[0]!.position, 10);
        expect(next.entries.map((e) => `${e.endpointId}@${e.version}`)).toEqual(['ep-1@1']);
        expect(next.missed).toBe(false);
      } finally {
        await inFlight.end();
        await store.close();
      }
    });
  });

  describe('migrations', () => {
    it('when a database is opened twice, then the migrations run once and the data stays', async () => {
      const { url } = await emptyDatabase();
      const first = await PostgresEndpointStore.open({ connectionString: url });
      await first.endpoints.create('ep-1', hashToken('t'), initialRecord());
      await first.close();
      const second = await PostgresEndpointStore.open({ connectionString: url });
      expect((await second.endpoints.get('ep-1'))?.record).toEqual(initialRecord());
      await second.close();
      await withClient(url, async (c) => {
        const { rows } = await c.query('SELECT version, name FROM schema_migrations ORDER BY version');
        expect(rows).toEqual(loadMigrations().map((m) => ({ version: m.version, name: m.name })));
        expect(await migrate(c)).toEqual([]);
      });
    });

    it('when a database of an earlier release is migrated, then the rate-limit counters (written on every request) are unlogged', async () => {
      const { url } = await emptyDatabase();
      await withClient(url, (c) =>
        c.query('CREATE TABLE rate_limits (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)'),
      );
      await (await PostgresEndpointStore.open({ connectionString: url })).close();
      await withClient(url, async (c) => {
        const { rows } = await c.query("SELECT relpersistence FROM pg_class WHERE relname = 'rate_limits'");
        expect(rows).toEqual([{ relpersistence: 'u' }]);
      });
    });

    it('when several instances open a fresh database at once, then all succeed and each migration is applied once', async () => {
      const { url } = await emptyDatabase();
      const stores = await Promise.all(Array.from({ length: 4 }, () => PostgresEndpointStore.open({ connectionString: url })));
      await Promise.all(stores.map((s) => s.ping()));
      await Promise.all(stores.map((s) => s.close()));
      await withClient(url, async (c) => {
        const { rows } = await c.query('SELECT count(*)::int AS n FROM schema_migrations');
        expect(rows[0].n).toBe(loadMigrations().length);
      });
    });

    it('when a database of the first schema is migrated, then its endpoints start at version 0 and their changes are logged', async () => {
      const { url } = await emptyDatabase();
      await withClient(url, async (c) => {
        expect(await migrate(c, loadMigrations().slice(0, 1))).toEqual([1]);
        await c.query('INSERT INTO endpoints (id, token_hash, record) VALUES ($1, $2, $3)', [
          'ep-1',
          hashToken('t'),
          JSON.stringify(initialRecord()),
        ]);
      });
      const store = await PostgresEndpointStore.open({ connectionString: url });
      try {
        expect((await store.endpoints.get('ep-1'))!.version).toBe(0);
        await store.endpoints.update('ep-1', (cur) => ({ write: { record: cur!.record, state: cur!.state }, result: undefined }));
        expect((await store.changes.eventsSince('ep-1', 0, 10)).map((e) => e.version)).toEqual([1]);
      } finally {
        await store.close();
      }
    });

    it('when a database of the previous schema is migrated, then the channels of its stored records are in the lookup index', async () => {
      const { url } = await emptyDatabase();
      const record = initialRecord();
      record.config.channels.chat_b = ['b0', 'shared'];
      record.config.channels.chat_d = ['shared', 'nul\u0000"quoted"'];
      // NUL anywhere in a record (here a message) must not stop the migration.
      record.meta.message.content = 'text\u0000';
      await withClient(url, async (c) => {
        expect(await migrate(c, loadMigrations().slice(0, 3))).toEqual([1, 2, 3]);
        await c.query('INSERT INTO endpoints (id, token_hash, record) VALUES ($1, $2, $3)', [
          'ep-1',
          hashToken('t'),
          JSON.stringify(record),
        ]);
        await c.query('INSERT INTO endpoints (id, token_hash, record) VALUES ($1, $2, $3)', [
          'ep-0',
          hashToken('t'),
          JSON.stringify(initialRecord()),
        ]);
      });
      const store = await PostgresEndpointStore.open({ connectionString: url });
      try {
        expect(await store.endpoints.lookupChannel('chat_b', 'shared', 10)).toEqual([{ endpoint: 'ep-1', bridge: 1 }]);
        expect(await store.endpoints.lookupChannel('chat_d', 'shared', 10)).toEqual([{ endpoint: 'ep-1', bridge: 0 }]);
        expect(await store.endpoints.lookupChannel('chat_b', 'b0', 10)).toEqual([{ endpoint: 'ep-1', bridge: 0 }]);
        expect(await store.endpoints.lookupChannel('chat_d', 'nul\u0000"quoted"', 10)).toEqual([{ endpoint: 'ep-1', bridge: 1 }]);
      } finally {
        await store.close();
      }
    });

    it('when a database with deliveries queued under schema version 8 (before message IDs) is migrated, then each webhook hands out its oldest first and the rest in order', async () => {
      const { url } = await emptyDatabase();
      await withClient(url, async (c) => {
        expect(await migrate(c, loadMigrations().slice(0, 8))).toHaveLength(8);
        await c.query('INSERT INTO endpoints (id, token_hash, record) VALUES ($1, $2, $3)', [
          'ep-1',
          hashToken('t'),
          JSON.stringify(initialRecord()),
        ]);
        for (let seq = 1; seq <= 3; seq++) {
          for (const platform of ['chat_a', 'chat_b']) {
            await c.query(
              `INSERT INTO outbox (endpoint_id, message_seq, platform, url, payload, next_attempt_at, expires_at) VALUES ('ep-1', $1, $2, $3, '{}', 0, 99999)`,
              [seq, platform, `https://hooks.example.com/${platform}`],
            );
          }
        }
      });
      const store = await PostgresEndpointStore.open({ connectionString: url });
      try {
        const handed: string[] = [];
        for (let round = 0; round < 4; round++) {
          const claimed = await store.deliveries.claim(2000, 60_000, 10);
          for (const d of claimed.sort((a, b) => a.platform.localeCompare(b.platform))) {
            handed.push(`${d.platform}:${d.seq}`);
            await store.deliveries.drop(d.id);
          }
        }
        expect(handed).toEqual(['chat_a:1', 'chat_b:1', 'chat_a:2', 'chat_b:2', 'chat_a:3', 'chat_b:3']);
      } finally {
        await store.close();
      }
    });

    it('when the migration files are read, then their versions run 1..n in order', () => {
      const versions = loadMigrations().map((m) => m.version);
      expect(versions).toEqual(versions.map((_, i) => i + 1));
    });
  });

  describe('update without a transaction (compare-and-set)', () => {
    /** Another client's committed change, made synchronously: from inside `decide`, between update's read and its write. */
    const commitElsewhere = (sql: string) => execFileSync('psql', [db.url, '-v', 'ON_ERROR_STOP=1', '-qc', sql]);
    /** A fresh store holding endpoint ep-1 (token digest of `token`), closed afterwards. */
    const withEndpoint = async (token: string, test: (store: PostgresEndpointStore) => Promise<void>) => {
      const store = await fresh();
      try {
        await store.endpoints.create('ep-1', hashToken(token), initialRecord());
        await test(store);
      } finally {
        await store.close();
      }
    };
    const withContent = (cur: StoredEndpoint, content: string) => {
      const record = structuredClone(cur.record);
      record.meta.message.content = content;
      return record;
    };

    it('when another writer commits between the read and the write, then update decides again on the new row', async () => {
      await withEndpoint('t', async (store) => {
        const seen: number[] = [];
        await store.endpoints.update('ep-1', (cur) => {
          seen.push(cur!.version);
          if (seen.length === 1) commitElsewhere("UPDATE endpoints SET version = version + 1 WHERE id = 'ep-1'");
          return { write: { record: withContent(cur!, `decided on v${cur!.version}`), state: cur!.state }, result: undefined };
        });
        expect(seen).toEqual([0, 1]);
        const after = (await store.endpoints.get('ep-1'))!;
        expect([after.version, after.record.meta.message.content]).toEqual([2, 'decided on v1']);
        expect((await store.changes.eventsSince('ep-1', 0, 10)).map((e) => [e.version, e.record.meta.message.content])).toEqual([
          [2, 'decided on v1'],
        ]);
      });
    });

    it('when the token is rotated between the read and the write, then the old token authorizes nothing', async () => {
      await withEndpoint('old', async (store) => {
        let calls = 0;
        const outcome = await store.endpoints.update('ep-1', (cur) => {
          if (++calls === 1)
            commitElsewhere(`UPDATE endpoints SET token_hash = '\\x${hashToken('new').toString('hex')}' WHERE id = 'ep-1'`);
          if (!tokenMatchesDigest(cur!.tokenHash, 'old')) return { result: 'unauthorized' };
          return { write: { record: withContent(cur!, 'written with the old token'), state: cur!.state }, result: 'ok' };
        });
        expect([outcome, calls]).toEqual(['unauthorized', 2]);
        const after = (await store.endpoints.get('ep-1'))!;
        expect([after.version, after.record.meta.message.content]).toEqual([0, initialRecord().meta.message.content]);
      });
    });

    it('when the row changes under every attempt, then update takes the row lock and commits once', async () => {
      await withEndpoint('t', async (store) => {
        let calls = 0;
        await store.endpoints.update('ep-1', (cur) => {
          // The first three attempts lose their race; the fourth runs under the row lock (a change
          // from elsewhere would now wait for it, so none is made).
          if (++calls <= 3) commitElsewhere("UPDATE endpoints SET version = version + 1 WHERE id = 'ep-1'");
          return { write: { record: withContent(cur!, `call ${calls}`), state: cur!.state }, result: undefined };
        });
        expect(calls).toBe(4);
        const after = (await store.endpoints.get('ep-1'))!;
        expect([after.version, after.record.meta.message.content]).toEqual([4, 'call 4']);
        expect((await store.changes.eventsSince('ep-1', 0, 10)).map((e) => e.version)).toEqual([4]);
      });
    });

    it('when a write queues deliveries, then they are queued with it, and a lost race queues none', async () => {
      await withEndpoint('t', async (store) => {
        let calls = 0;
        await store.endpoints.update('ep-1', (cur) => {
          if (++calls === 1) commitElsewhere("UPDATE endpoints SET version = version + 1 WHERE id = 'ep-1'");
          const deliveries = (['chat_a', 'chat_b'] as const).map((platform) => ({
            platform,
            url: `https://h.example/${calls}/${platform}`,
            payload: '{}',
            expiresAt: 10_000,
          }));
          return { write: { record: cur!.record, state: pendingState(1, 1000), deliveries }, result: undefined };
        });
        const queued = await store.deliveries.claim(2000, 60_000, 10);
        expect(queued.map((d) => d.url).sort()).toEqual(['https://h.example/2/chat_a', 'https://h.example/2/chat_b']);
      });
    });
  });

  describe('several instances', () => {
    it('when two instances (separate pools) append hundreds of times to one endpoint, then every append survives', async () => {
      // 400 writers queue on one row lock: on a loaded machine the queue can outlast the default
      // 5 s statement timeout, which is not what this test is about (every append surviving).
      const patient = { statementTimeoutMs: 30_000 };
      const a = await fresh(patient);
      const b = await PostgresEndpointStore.open({ connectionString: db.url, ...patient });
      try {
        await a.endpoints.create('ep-1', hashToken('t'), initialRecord());
        const words = Array.from({ length: 400 }, (_, i) => `w${i}`);
        await Promise.all(
          words.map((word, i) =>
            (i % 2 ? a : b).endpoints.update('ep-1', (cur) => {
              const record = structuredClone(cur!.record);
              record.config.blacklist.push(word);
              return { write: { record, state: cur!.state }, result: undefined };
            }),
          ),
        );
        expect(new Set((await b.endpoints.get('ep-1'))!.record.config.blacklist)).toEqual(new Set(words));
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('when two instances claim the same outbox at once, then no entry is handed out twice', async () => {
      const a = await fresh();
      const b = await PostgresEndpointStore.open({ connectionString: db.url });
      try {
        for (let i = 0; i < 30; i++) {
          await a.endpoints.create(`ep-${i}`, hashToken('t'), initialRecord());
          await a.endpoints.update(`ep-${i}`, (cur) => ({
            write: {
              record: cur!.record,
              state: pendingState(1, 1000),
              deliveries: (['chat_a', 'chat_b'] as const).map((platform) => ({
                platform,
                url: `https://h.example/${platform}`,
                payload: '{}',
                expiresAt: 10_000,
              })),
            },
            result: undefined,
          }));
        }
        const batches = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).deliveries.claim(2000, 60_000, 7)));
        const ids = batches.flat().map((d) => d.id);
        expect(ids).toHaveLength(60);
        expect(new Set(ids).size).toBe(60);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('when deliveries complete while a newer message is queued, then nothing deadlocks and only the newer message stays queued', async () => {
      const a = await fresh();
      const b = await PostgresEndpointStore.open({ connectionString: db.url });
      const pend = (seq: number) =>
        a.endpoints.update('ep-1', (cur) => ({
          write: {
            record: cur!.record,
            state: pendingState(seq, 1000),
            deliveries: (['chat_a', 'chat_b'] as const).map((platform) => ({
              platform,
              url: `https://h.example/${platform}`,
              payload: '{}',
              expiresAt: 10_000,
            })),
          },
          result: undefined,
        }));
      try {
        await a.endpoints.create('ep-1', hashToken('t'), initialRecord());
        for (let seq = 1; seq <= 40; seq++) {
          await pend(seq);
          const claimed = await b.deliveries.claim(2000, 60_000, 10);
          expect(claimed).toHaveLength(2);
          const outcomes = await Promise.allSettled([
            ...claimed.map((d) => b.deliveries.complete(d, (cur, stillQueued) => ({ result: stillQueued && cur?.state.seq === d.seq }))),
            pend(seq + 1000),
          ]);
          expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
          // Whatever the interleaving, the completed entries are gone and the newer message's two stay
          // (a newer message drops no older entry: each is removed once delivered).
          const { rows } = await admin.query('SELECT DISTINCT message_seq::int FROM outbox');
          expect(rows).toEqual([{ message_seq: seq + 1000 }]);
          await a.endpoints.update('ep-1', (cur) => ({
            write: { record: cur!.record, state: { seq, pendingSince: null, queue: [] } },
            result: undefined,
          }));
        }
      } finally {
        await a.close();
        await b.close();
      }
    });
  });

  describe('change feed (LISTEN/NOTIFY)', () => {
    /** Versions told to a subscriber of `id`; `undefined` entries are "look again" after a reconnection. */
    const listen = (feed: ChangeFeed, id: string) => {
      const heard: (number | undefined)[] = [];
      feed.subscribe(id, (version) => heard.push(version));
      return heard;
    };
    const until = async (what: string, condition: () => boolean) => {
      const deadline = Date.now() + 10_000;
      while (!condition()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const change = (store: PostgresEndpointStore, word: string) =>
      store.endpoints.update('ep-1', (cur) => {
        const record = structuredClone(cur!.record);
        record.config.blacklist.push(word);
        return { write: { record, state: cur!.state }, result: undefined };
      });

    it('when one instance commits a change, then the feed of another instance hears its version', async () => {
      const a = await fresh();
      const b = await PostgresEndpointStore.open({ connectionString: db.url });
      const feed = await b.changes.openFeed();
      try {
        await a.endpoints.create('ep-1', hashToken('t'), initialRecord());
        const heard = listen(feed, 'ep-1');
        await change(a, 'x');
        await change(b, 'y');
        await until('two notices', () => heard.length >= 2);
        expect(heard).toEqual([1, 2]);
        // The notice carries no record: a NOTIFY payload is the ID and the version only.
        expect((await b.changes.eventsSince('ep-1', 0, 10)).map((e) => e.record.config.blacklist)).toEqual([['x'], ['x', 'y']]);
      } finally {
        await feed.close();
        await a.close();
        await b.close();
      }
    });

    it('when a transaction that notified rolls back, then nothing is heard', async () => {
      const store = await fresh();
      const feed = await store.changes.openFeed();
      try {
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        const heard = listen(feed, 'ep-1');
        // Written (and notified) inside a transaction that then fails.
        await admin.query('BEGIN');
        await admin.query("SELECT pg_notify('chatbridge_changes', 'ep-1:41')");
        await admin.query('ROLLBACK');
        await change(store, 'x');
        await until('the committed notice', () => heard.length >= 1);
        expect(heard).toEqual([1]);
      } finally {
        await feed.close();
        await store.close();
      }
    });

    it('when the LISTEN connection is killed, then the feed reconnects, tells every subscriber to look again, and hears later changes', async () => {
      const store = await fresh();
      const errors: Error[] = [];
      const feed = await store.changes.openFeed({ onError: (err) => errors.push(err) });
      try {
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        const heard = listen(feed, 'ep-1');
        await change(store, 'x');
        await until('the first notice', () => heard.length >= 1);
        const { rows } = await admin.query(
          "SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE application_name = 'chatbridge-listen' AND datname = current_database()",
        );
        expect(rows).toEqual([{ killed: true }]);
        // A change committed while nobody listens is not heard as such; the "look again" covers it.
        await until('the look-again notice after reconnecting', () => heard.includes(undefined));
        expect(errors.length).toBeGreaterThan(0);
        await change(store, 'y');
        await until('the notice after reconnecting', () => heard.includes(2));
        expect(heard.filter((v) => v !== undefined)).toEqual([1, 2]);
      } finally {
        await feed.close();
        await store.close();
      }
    });

    it('when the feed is closed, then its connection is gone', async () => {
      const store = await fresh();
      const feed = await store.changes.openFeed();
      const listeners = async () =>
        (
          await admin.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'chatbridge-listen' AND datname = current_database()",
          )
        ).rows[0].n;
      expect(await listeners()).toBe(1);
      await feed.close();
      await until('the connection to close', () => true);
      const deadline = Date.now() + 5000;
      while ((await listeners()) !== 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await listeners()).toBe(0);
      await store.close();
    });
  });

  describe('reads of one turn share a query', () => {
    it('when many reads run at once, then each gets its own endpoint (or none), duplicates included', async () => {
      const store = await fresh();
      for (let i = 0; i < 30; i++)
        await store.endpoints.create(`ep-${i}`, hashToken(`t${i}`), {
          ...initialRecord(),
          config: { ...initialRecord().config, blacklist: [`w${i}`] },
        });
      const ids = [...Array.from({ length: 40 }, (_, i) => `ep-${i}`), 'ep-3', 'ep-3', 'missing'];
      const read = await Promise.all(ids.map((id) => store.endpoints.get(id)));
      ids.forEach((id, i) => {
        const n = Number(id.slice(3));
        if (id.startsWith('ep-') && n < 30) {
          expect(read[i]!.record.config.blacklist).toEqual([`w${n}`]);
          expect(Buffer.from(read[i]!.tokenHash)).toEqual(hashToken(`t${n}`));
        } else expect(read[i]).toBeUndefined();
      });
      await store.close();
    });

    it('when a write commits, then a read started afterwards sees it, even in the same turn as other reads', async () => {
      const store = await fresh();
      await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
      await store.endpoints.create('ep-2', hashToken('t'), initialRecord());
      const record = { ...initialRecord(), config: { ...initialRecord().config, blacklist: ['new'] } };
      await store.endpoints.update('ep-1', (cur) => ({ write: { record, state: cur!.state }, result: undefined }));
      const [one, two] = await Promise.all([store.endpoints.get('ep-1'), store.endpoints.get('ep-2')]);
      expect([one!.version, one!.record.config.blacklist, two!.version]).toEqual([1, ['new'], 0]);
      await store.close();
    });
  });

  describe('writes of one turn commit in one transaction', () => {
    const draft = (platform: 'chat_a' | 'chat_b') => ({
      platform,
      url: `https://hooks.example.com/${platform}`,
      payload: '{"n":1}',
      expiresAt: 10_000,
    });

    /** What the store sends while `work` runs: statement names, or the text of unnamed queries (BEGIN, COMMIT). */
    const sentDuring = async <T>(work: () => Promise<T>): Promise<{ result: T; sent: string[] }> => {
      const sent: string[] = [];
      const original = pg.Client.prototype.query;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        const query = args[0] as { name?: string; text?: string } | string | undefined;
        sent.push(typeof query === 'string' ? query : (query?.name ?? query?.text ?? '?'));
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      } as typeof original;
      try {
        return { result: await work(), sent };
      } finally {
        pg.Client.prototype.query = original;
      }
    };

    it('when updates of several endpoints run at once, then each commits as alone would: row, event, outbox, notice', async () => {
      const store = await fresh();
      const ids = ['ep-a', 'ep-b', 'ep-c', 'ep-d'];
      for (const id of ids) await store.endpoints.create(id, hashToken(`t-${id}`), initialRecord());
      await store.endpoints.update('ep-d', (cur) => ({
        write: { record: cur!.record, state: pendingState(1, 500), deliveries: [draft('chat_a')] },
        result: 0,
      }));
      const feed = await store.changes.openFeed();
      const heard: string[] = [];
      for (const id of ids) feed.subscribe(id, (version) => version !== undefined && heard.push(`${id}:${version}`));
      // Which statements the store sends (the batch must go as writeMany).
      const record = (word: string): EndpointRecord => ({ ...initialRecord(), config: { ...initialRecord().config, blacklist: [word] } });
      const { result: results, sent: queried } = await sentDuring(() =>
        Promise.all([
          ...['ep-a', 'ep-b', 'ep-c'].map((id) =>
            store.endpoints.update(id, (_cur) => ({
              write: { record: record(id), state: pendingState(1, 1000), deliveries: [draft('chat_a'), draft('chat_b')] },
              result: id,
            })),
          ),
          // ep-d goes idle: its queued delivery is dropped.
          store.endpoints.update('ep-d', (_cur) => ({
            write: { record: record('idle'), state: { seq: 1, pendingSince: null, queue: [] } },
            result: 'ep-d',
          })),
          // A second update of ep-a in the same turn: decided on the same row, it is decided again.
          store.endpoints.update('ep-a', (cur) => ({
            write: { record: record(`${cur!.record.config.blacklist[0] ?? 'none'}+again`), state: cur!.state },
            result: 'again',
          })),
        ]),
      );
      expect(results).toEqual(['ep-a', 'ep-b', 'ep-c', 'ep-d', 'again']);
      expect(queried).toContain('chatbridge.writeMany');
      const rows = (await admin.query('SELECT id, version, record, message_seq, pending_since FROM endpoints ORDER BY id')).rows;
      expect(
        rows.map((r) => [
          r.id,
          Number(r.version),
          JSON.parse(r.record).config.blacklist[0],
          r.pending_since === null ? null : Number(r.pending_since),
        ]),
      ).toEqual([
        ['ep-a', 2, 'ep-a+again', 1000],
        ['ep-b', 1, 'ep-b', 1000],
        ['ep-c', 1, 'ep-c', 1000],
        ['ep-d', 2, 'idle', null],
      ]);
      const events = (await admin.query('SELECT endpoint_id, version, record FROM endpoint_events ORDER BY endpoint_id, version')).rows;
      expect(events.map((e) => `${e.endpoint_id}:${e.version}:${JSON.parse(e.record).config.blacklist[0] ?? ''}`)).toEqual([
        'ep-a:1:ep-a',
        'ep-a:2:ep-a+again',
        'ep-b:1:ep-b',
        'ep-c:1:ep-c',
        'ep-d:1:',
        'ep-d:2:idle',
      ]);
      const outbox = (await admin.query('SELECT endpoint_id, platform FROM outbox ORDER BY endpoint_id, platform')).rows;
      expect(outbox.map((o) => `${o.endpoint_id}:${o.platform}`)).toEqual([
        'ep-a:chat_a',
        'ep-a:chat_b',
        'ep-b:chat_a',
        'ep-b:chat_b',
        'ep-c:chat_a',
        'ep-c:chat_b',
      ]);
      await expect.poll(() => [...heard].sort(), { timeout: 5000 }).toEqual(['ep-a:1', 'ep-a:2', 'ep-b:1', 'ep-c:1', 'ep-d:2']);
      await feed.close();
      await store.close();
    });

    it('when the writes of a turn name each endpoint once, then they commit as one statement, without BEGIN and COMMIT', async () => {
      const store = await fresh();
      const ids = ['ep-a', 'ep-b', 'ep-c'];
      for (const id of ids) await store.endpoints.create(id, hashToken('t'), initialRecord());
      const { sent } = await sentDuring(() =>
        Promise.all(
          ids.map((id) => store.endpoints.update(id, (cur) => ({ write: { record: cur!.record, state: cur!.state }, result: id }))),
        ),
      );
      expect(sent.filter((q) => q !== 'chatbridge.getMany' && q !== 'chatbridge.get')).toEqual(['chatbridge.writeMany']);
      const rows = (await admin.query('SELECT id, version FROM endpoints ORDER BY id')).rows;
      expect(rows.map((r) => [r.id, Number(r.version)])).toEqual([
        ['ep-a', 1],
        ['ep-b', 1],
        ['ep-c', 1],
      ]);
      await store.close();
    });

    it('when one write of a turn fails, then only that update fails and the others commit', async () => {
      const store = await fresh();
      for (const id of ['ep-a', 'ep-b']) await store.endpoints.create(id, hashToken('t'), initialRecord());
      const results = await Promise.allSettled([
        store.endpoints.update('ep-a', (cur) => ({ write: { record: cur!.record, state: pendingState(1, 1000) }, result: 'a' })),
        // A delivery without a URL breaks the outbox's NOT NULL constraint.
        store.endpoints.update('ep-b', (cur) => ({
          write: {
            record: cur!.record,
            state: pendingState(1, 1000),
            deliveries: [{ platform: 'chat_a', url: null as unknown as string, payload: '{}', expiresAt: 1 }],
          },
          result: 'b',
        })),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
      const rows = (await admin.query('SELECT id, version FROM endpoints ORDER BY id')).rows;
      expect(rows.map((r) => [r.id, Number(r.version)])).toEqual([
        ['ep-a', 1],
        ['ep-b', 0],
      ]);
      await store.close();
    });
  });

  describe('storage', () => {
    it('stores the token only as a digest', async () => {
      const store = await fresh();
      const token = 'cbt_super-secret-token-0123456789';
      await store.endpoints.create('ep-1', hashToken(token), initialRecord());
      // A plain Uint8Array (not a Buffer) is stored the same way.
      expect(await store.endpoints.setTokenHash('ep-1', new Uint8Array(hashToken(token)))).toBe(true);
      await store.close();
      const { rows } = await admin.query("SELECT token_hash, row_to_json(e)::text AS everything FROM endpoints e WHERE id = 'ep-1'");
      expect(rows[0].token_hash).toEqual(hashToken(token));
      expect(rows[0].everything).not.toContain(token);
      const { rows: columns } = await admin.query(
        "SELECT data_type FROM information_schema.columns WHERE table_name = 'endpoints' AND column_name = 'token_hash'",
      );
      expect(columns).toEqual([{ data_type: 'bytea' }]);
    });

    it('when a record is written, then it reads back with its keys in the order written, byte for byte', async () => {
      const store = await fresh();
      await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
      // Keys in an order jsonb would not keep (it sorts by length, then bytes).
      const reordered = { meta: initialRecord().meta, config: initialRecord().config } as EndpointRecord;
      reordered.config.blacklist = ['ünïcödé', 'emoji 🎉', 'quote " backslash \\'];
      await store.endpoints.update('ep-1', (cur) => ({ write: { record: reordered, state: cur!.state }, result: undefined }));
      expect(JSON.stringify((await store.endpoints.get('ep-1'))!.record)).toBe(JSON.stringify(reordered));
      const { rows } = await admin.query("SELECT record FROM endpoints WHERE id = 'ep-1'");
      expect(rows[0].record).toBe(JSON.stringify(reordered));
      await store.close();
    });

    it('when times are real epoch milliseconds, then they come back as the same JavaScript numbers', async () => {
      const store = await fresh();
      const now = Date.now();
      await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
      await store.endpoints.update('ep-1', (cur) => ({
        write: {
          record: cur!.record,
          state: pendingState(7, now),
          deliveries: [{ platform: 'chat_a', url: 'https://h.example/a', payload: '{}', expiresAt: now + 30_000 }],
        },
        result: undefined,
      }));
      expect((await store.endpoints.get('ep-1'))!.state).toEqual(pendingState(7, now));
      const [d] = await store.deliveries.claim(now, 1000, 10);
      expect(d).toMatchObject({ seq: 7, expiresAt: now + 30_000, attempts: 1 });
      expect(typeof d!.id).toBe('number');
      expect(await store.deliveries.count()).toBe(1);
      expect(await store.endpoints.listExpired(now + 1, 10)).toEqual(['ep-1']);
      await store.close();
    });

    it('lists IDs in byte order, as SQLite does, whatever the database collation', async () => {
      const store = await fresh();
      const ids = ['b', 'B', 'a-2', 'a_1', 'a1', 'A'];
      for (const id of ids) await store.endpoints.create(id, hashToken(id), initialRecord());
      const bytewise = [...ids].sort();
      expect(await store.endpoints.listIds(undefined, 10)).toEqual(bytewise);
      expect(await store.endpoints.listIds('a-2', 10)).toEqual(bytewise.slice(bytewise.indexOf('a-2') + 1));
      await store.close();
    });
  });

  describe('failures reject instead of hanging', () => {
    let silent: Server | undefined;
    const sockets = new Set<Socket>();
    afterAll(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => (silent ? silent.close(resolve) : resolve(undefined)));
    });

    it('when nothing listens at DATABASE_URL, then open rejects at once', async () => {
      const started = Date.now();
      await expect(PostgresEndpointStore.open({ connectionString: 'postgres://postgres@127.0.0.1:1/none' })).rejects.toThrow(
        /ECONNREFUSED/,
      );
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('when the server accepts but never answers, then open rejects after the connection timeout', async () => {
      silent = createServer((socket) => sockets.add(socket));
      await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
      const { port } = silent.address() as AddressInfo;
      const started = Date.now();
      await expect(
        PostgresEndpointStore.open({ connectionString: `postgres://postgres@127.0.0.1:${port}/none`, connectionTimeoutMs: 300 }),
      ).rejects.toThrow(/timeout/i);
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('when a row stays locked past the statement timeout, then update rejects and the store keeps working', async () => {
      const store = await fresh({ statementTimeoutMs: 300 });
      await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
      const holder = new pg.Client({ connectionString: db.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query("SELECT 1 FROM endpoints WHERE id = 'ep-1' FOR UPDATE");
        const started = Date.now();
        const rewrite = (cur: StoredEndpoint | undefined) => ({ write: { record: cur!.record, state: cur!.state }, result: undefined });
        await expect(store.endpoints.update('ep-1', rewrite)).rejects.toMatchObject({ code: '57014' });
        expect(Date.now() - started).toBeLessThan(2000);
        await holder.query('ROLLBACK');
        expect(await store.endpoints.update('ep-1', (cur) => ({ result: cur!.state.seq }))).toBe(0);
      } finally {
        await holder.end();
        await store.close();
      }
    });

    it('when the connection of a transaction is terminated mid-way, then the call rejects, the process lives on and the store keeps working', async () => {
      const store = await fresh({ statementTimeoutMs: 10_000 });
      await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
      const delivery = { platform: 'chat_a' as const, url: 'https://hooks.example.com/a', payload: '{}', expiresAt: Date.now() + 60_000 };
      await store.endpoints.update('ep-1', (cur) => ({
        write: { record: cur!.record, state: pendingState(1, 1000), deliveries: [delivery] },
        result: undefined,
      }));
      const [claimed] = await store.deliveries.claim(Date.now(), 60_000, 1);
      const holder = new pg.Client({ connectionString: db.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query("SELECT 1 FROM endpoints WHERE id = 'ep-1' FOR UPDATE");
        // completeDelivery runs BEGIN ... COMMIT on a checked-out connection, and waits there for the row lock.
        const completing = store.deliveries
          .complete(claimed!, () => ({ result: undefined }))
          .then(
            () => 'completed',
            (e: Error) => e.message,
          );
        const waitingInTransaction = async () =>
          (
            await admin.query(
              "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'chatbridge' AND wait_event_type = 'Lock'",
            )
          ).rows as { pid: number }[];
        let waiting: { pid: number }[] = [];
        while ((waiting = await waitingInTransaction()).length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
        await admin.query('SELECT pg_terminate_backend($1)', [waiting[0]!.pid]);
        expect(await completing).toMatch(/terminat/i);
        await holder.query('ROLLBACK');
        expect(await store.endpoints.update('ep-1', (cur) => ({ result: cur!.state.seq }))).toBe(1);
        expect(await store.deliveries.count()).toBe(1); // rolled back: the delivery is still queued
      } finally {
        await holder.end();
        await store.close();
      }
    });

    it("when one lane's claim fails, then the other lane's claim is undone too: nothing stays leased unsent", async () => {
      const store = await fresh();
      await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
      const queued = (platform: 'chat_a' | 'chat_b') => ({
        platform,
        url: `https://hooks.example.com/${platform}`,
        payload: '{}',
        expiresAt: Date.now() + 60_000,
      });
      await store.endpoints.update('ep-1', (cur) => ({
        write: { record: cur!.record, state: pendingState(1, 1000), deliveries: [queued('chat_a'), queued('chat_b')] },
        result: undefined,
      }));
      const original = pg.Client.prototype.query;
      let claims = 0;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        const query = args[0] as { name?: string } | undefined;
        if (query?.name === 'chatbridge.claim' && ++claims === 2) return Promise.reject(new Error('the second lane failed'));
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      } as typeof original;
      try {
        await expect(store.deliveries.claim(Date.now(), 60_000, { chat_a: 5, chat_b: 5 })).rejects.toThrow('the second lane failed');
      } finally {
        pg.Client.prototype.query = original;
      }
      const claimed = await store.deliveries.claim(Date.now(), 60_000, { chat_a: 5, chat_b: 5 });
      expect(claimed.map((d) => [d.platform, d.attempts]).sort()).toEqual([
        ['chat_a', 1],
        ['chat_b', 1],
      ]);
      await store.close();
    });

    it('when every pooled connection stays busy past the acquire timeout, then the next call rejects', async () => {
      const store = await fresh({ poolSize: 1, acquireTimeoutMs: 300, statementTimeoutMs: 3000 });
      await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
      const holder = new pg.Client({ connectionString: db.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query("SELECT 1 FROM endpoints WHERE id = 'ep-1' FOR UPDATE");
        // Its write waits for the row lock, holding the only connection.
        const stuck = store.endpoints.update('ep-1', (cur) => ({ write: { record: cur!.record, state: cur!.state }, result: undefined }));
        const waitingForLock = async () =>
          (
            await admin.query(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
          ).rows[0].n > 0;
        while (!(await waitingForLock())) await new Promise((resolve) => setTimeout(resolve, 10));
        await expect(store.ping()).rejects.toThrow(/timeout exceeded when trying to connect/);
        await holder.query('ROLLBACK');
        await stuck;
      } finally {
        await holder.end();
        await store.close();
      }
    });

    it('when the store is closed, then calls reject and closing again is harmless', async () => {
      const store = await fresh();
      await store.close();
      await expect(store.ping()).rejects.toThrow();
      await expect(store.close()).resolves.toBeUndefined();
    });
  });
});
