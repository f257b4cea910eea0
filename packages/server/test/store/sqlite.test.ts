import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { initialRecord } from '../../src/domain/record.ts';
import { SqliteEndpointStore, sqliteMigrations } from '../../src/store/sqlite/store.ts';
import type { GroupCommitTiming, StoredEndpoint } from '../../src/store/port.ts';
import { hashToken } from '../../src/tokens.ts';
import { isUnavailable } from '../../src/store/unavailable.ts';
import { describeStoreContract } from './contract.ts';

const scratchFile = () => join(mkdtempSync(join(tmpdir(), 'chatbridge-sqlite-')), 'store.sqlite');

describeStoreContract('sqlite', async (options) => new SqliteEndpointStore(scratchFile(), options));

describe('SqliteEndpointStore', () => {
  it('when reopened, then committed data is still there (durable file, migrations idempotent)', async () => {
    const file = scratchFile();
    const first = new SqliteEndpointStore(file);
    await first.endpoints.create('ep-1', hashToken('t'), initialRecord());
    await first.close();
    const second = new SqliteEndpointStore(file);
    expect((await second.endpoints.get('ep-1'))?.record).toEqual(initialRecord());
    await second.close();
  });

  it('when a file of the first schema is opened, then its endpoints start at version 0 and their changes are logged', async () => {
    const file = scratchFile();
    const old = new DatabaseSync(file);
    old.exec(sqliteMigrations()[0]!.sql);
    old.exec('PRAGMA user_version = 1');
    old
      .prepare('INSERT INTO endpoints (id, token_hash, record) VALUES (?, ?, ?)')
      .run('ep-1', hashToken('t'), JSON.stringify(initialRecord()));
    old.close();
    const store = new SqliteEndpointStore(file);
    expect((await store.endpoints.get('ep-1'))!.version).toBe(0);
    await store.endpoints.update('ep-1', (cur) => ({ write: { record: cur!.record, state: cur!.state }, result: undefined }));
    expect((await store.changes.eventsSince('ep-1', 0, 10)).map((e) => e.version)).toEqual([1]);
    await store.close();
  });

  it('when a file whose events were keyed by endpoint is opened, then they replay as before and new changes follow them', async () => {
    const file = scratchFile();
    const old = new DatabaseSync(file);
    old.exec(sqliteMigrations()[0]!.sql);
    old.exec(sqliteMigrations()[1]!.sql);
    old.exec('PRAGMA user_version = 2');
    const recordOf = (n: number) => {
      const record = initialRecord();
      record.config.blacklist.push(`v${n}`);
      return JSON.stringify(record);
    };
    const insert = old.prepare('INSERT INTO endpoint_events (endpoint_id, version, record, created_at) VALUES (?, ?, ?, ?)');
    for (const id of ['ep-1', 'ep-2']) {
      old.prepare('INSERT INTO endpoints (id, token_hash, record, version) VALUES (?, ?, ?, 3)').run(id, hashToken('t'), recordOf(3));
      for (let v = 1; v <= 3; v++) insert.run(id, v, recordOf(v), Date.now());
    }
    // An endpoint whose events are past the age limit: not moved, so its replay starts afresh.
    old.prepare('INSERT INTO endpoints (id, token_hash, record, version) VALUES (?, ?, ?, 1)').run('ep-idle', hashToken('t'), recordOf(1));
    insert.run('ep-idle', 1, recordOf(1), Date.now() - 11 * 60_000);
    old.close();
    const store = new SqliteEndpointStore(file, { eventWindow: { maxEvents: 4 } });
    const replay = async (id: string) =>
      (await store.changes.eventsSince(id, 0, 10)).map((e) => [e.version, e.record.config.blacklist.at(-1)]);
    expect(await replay('ep-1')).toEqual([
      [1, 'v1'],
      [2, 'v2'],
      [3, 'v3'],
    ]);
    const append = (n: number) =>
      store.endpoints.update('ep-1', (cur) => {
        const record = structuredClone(cur!.record);
        record.config.blacklist.push(`v${n}`);
        return { write: { record, state: cur!.state }, result: undefined };
      });
    await append(4);
    await append(5);
    expect(await replay('ep-1')).toEqual([
      [2, 'v2'],
      [3, 'v3'],
      [4, 'v4'],
      [5, 'v5'],
    ]); // the window of 4
    expect((await store.changes.eventsSince('ep-1', 3, 10)).map((e) => e.version)).toEqual([4, 5]);
    expect(await replay('ep-2')).toEqual([
      [1, 'v1'],
      [2, 'v2'],
      [3, 'v3'],
    ]);
    expect(await replay('ep-idle')).toEqual([]);
    await store.close();
    const db = new DatabaseSync(file, { readOnly: true });
    expect(db.prepare("SELECT count(*) AS n FROM event_log WHERE endpoint_id = 'ep-idle'").get()).toEqual({ n: 0 });
    db.close();
  });

  it('when a file of the previous schema is opened, then the channels of its stored records are in the lookup index', async () => {
    const file = scratchFile();
    const old = new DatabaseSync(file);
    for (const migration of sqliteMigrations().slice(0, 3)) old.exec(migration.sql);
    old.exec('PRAGMA user_version = 3');
    const record = initialRecord();
    record.config.channels.chat_b = ['b0', 'shared'];
    record.config.channels.chat_d = ['shared', 'nul\u0000"quoted"'];
    // NUL anywhere in a record (here a message) must not stop the migration.
    record.meta.message.content = 'text\u0000';
    old.prepare('INSERT INTO endpoints (id, token_hash, record) VALUES (?, ?, ?)').run('ep-1', hashToken('t'), JSON.stringify(record));
    old
      .prepare('INSERT INTO endpoints (id, token_hash, record) VALUES (?, ?, ?)')
      .run('ep-0', hashToken('t'), JSON.stringify(initialRecord()));
    old.close();
    const store = new SqliteEndpointStore(file);
    expect(await store.endpoints.lookupChannel('chat_b', 'shared', 10)).toEqual([{ endpoint: 'ep-1', bridge: 1 }]);
    expect(await store.endpoints.lookupChannel('chat_d', 'shared', 10)).toEqual([{ endpoint: 'ep-1', bridge: 0 }]);
    expect(await store.endpoints.lookupChannel('chat_b', 'b0', 10)).toEqual([{ endpoint: 'ep-1', bridge: 0 }]);
    expect(await store.endpoints.lookupChannel('chat_d', 'nul\u0000"quoted"', 10)).toEqual([{ endpoint: 'ep-1', bridge: 1 }]);
    await store.close();
  });

  it('when a file with deliveries queued under schema version 8 (before message IDs) is opened, then each webhook hands out its oldest first and the rest in order', async () => {
    const file = scratchFile();
    const old = new DatabaseSync(file);
    for (const migration of sqliteMigrations().slice(0, 8)) old.exec(migration.sql);
    old.exec('PRAGMA user_version = 8');
    old
      .prepare('INSERT INTO endpoints (id, token_hash, record) VALUES (?, ?, ?)')
      .run('ep-1', hashToken('t'), JSON.stringify(initialRecord()));
    const enqueue = old.prepare(
      `INSERT INTO outbox (endpoint_id, message_seq, platform, url, payload, next_attempt_at, expires_at) VALUES ('ep-1', ?, ?, ?, '{}', 0, 99999)`,
    );
    for (let seq = 1; seq <= 3; seq++) {
      enqueue.run(seq, 'chat_a', 'https://hooks.example.com/a');
      enqueue.run(seq, 'chat_b', 'https://hooks.example.com/b');
    }
    old.close();
    const store = new SqliteEndpointStore(file);
    const handed: string[] = [];
    for (let round = 0; round < 4; round++) {
      for (const d of await store.deliveries.claim(2000, 60_000, 10)) {
        handed.push(`${d.platform}:${d.seq}`);
        await store.deliveries.drop(d.id);
      }
    }
    expect(handed).toEqual(['chat_a:1', 'chat_b:1', 'chat_a:2', 'chat_b:2', 'chat_a:3', 'chat_b:3']);
    await store.close();
  });

  it('when a file was migrated by a newer release, then opening it is refused, naming both schema versions', () => {
    const file = scratchFile();
    const newer = new DatabaseSync(file);
    const known = sqliteMigrations().length;
    newer.exec(`PRAGMA user_version = ${known + 1}`);
    newer.close();
    expect(() => new SqliteEndpointStore(file)).toThrow(`schema version ${known + 1}, newer than this release's ${known}`);
  });

  it('when an endpoint is deleted, or its events leave the window, then their rows leave the file', async () => {
    const file = scratchFile();
    const store = new SqliteEndpointStore(file, { eventWindow: { maxEvents: 3 } });
    const write = (id: string) =>
      store.endpoints.update(id, (cur) => ({ write: { record: cur!.record, state: cur!.state }, result: undefined }));
    for (const id of ['ep-1', 'ep-2']) await store.endpoints.create(id, hashToken('t'), initialRecord());
    for (let i = 0; i < 10; i++) await Promise.all([write('ep-1'), write('ep-2')]);
    const rows = () => {
      const db = new DatabaseSync(file, { readOnly: true });
      const counted = db.prepare('SELECT endpoint_id, count(*) AS n FROM event_log GROUP BY endpoint_id ORDER BY endpoint_id').all();
      db.close();
      return counted.map((r) => [r.endpoint_id, r.n]);
    };
    expect(rows()).toEqual([
      ['ep-1', 3],
      ['ep-2', 3],
    ]);
    // The list the row keeps (extended in memory from one update to the next) names the rows left.
    for (const id of ['ep-1', 'ep-2']) expect((await store.changes.eventsSince(id, 0, 10)).map((e) => e.version)).toEqual([8, 9, 10]);
    await store.endpoints.delete('ep-1');
    expect(rows()).toEqual([['ep-2', 3]]);
    await store.close();
  });

  it('when the file is reopened with a smaller window, then the next update drops every event beyond it', async () => {
    const file = scratchFile();
    const write = (store: SqliteEndpointStore) =>
      store.endpoints.update('ep-1', (cur) => ({ write: { record: cur!.record, state: cur!.state }, result: undefined }));
    const wide = new SqliteEndpointStore(file, { eventWindow: { maxEvents: 10 } });
    await wide.endpoints.create('ep-1', hashToken('t'), initialRecord());
    for (let i = 0; i < 6; i++) await write(wide);
    await wide.close();
    const logged = () => {
      const db = new DatabaseSync(file, { readOnly: true });
      const { n } = db.prepare("SELECT count(*) AS n FROM event_log WHERE endpoint_id = 'ep-1'").get() as { n: number };
      db.close();
      return n;
    };
    const narrow = new SqliteEndpointStore(file, { eventWindow: { maxEvents: 2 } });
    await write(narrow); // the list comes from the row: six events, five of them now beyond the window
    expect((await narrow.changes.eventsSince('ep-1', 0, 10)).map((e) => e.version)).toEqual([6, 7]);
    expect(logged()).toBe(2);
    await write(narrow); // the list this process kept
    expect((await narrow.changes.eventsSince('ep-1', 0, 10)).map((e) => e.version)).toEqual([7, 8]);
    expect(logged()).toBe(2);
    await narrow.close();
    const none = new SqliteEndpointStore(file, { eventWindow: { maxEvents: 0 } });
    await write(none); // a window of nothing: the list empties, the record is still written
    await write(none);
    expect(await none.changes.eventsSince('ep-1', 0, 10)).toEqual([]);
    expect(logged()).toBe(0);
    expect((await none.endpoints.get('ep-1'))?.version).toBe(10);
    await none.close();
    const again = new SqliteEndpointStore(file, { eventWindow: { maxEvents: 10 } });
    await write(again); // the emptied list takes new events again
    expect((await again.changes.eventsSince('ep-1', 0, 10)).map((e) => e.version)).toEqual([11]);
    await again.close();
  });

  it('when the sweep has emptied the log and new events are logged, then an old list entry never matches them (IDs are not reused)', async () => {
    let now = 1_000_000;
    const store = new SqliteEndpointStore(scratchFile(), { clock: () => now, eventWindow: { maxAgeMs: 1000 } });
    const write = (id: string) =>
      store.endpoints.update(id, (cur) => ({ write: { record: cur!.record, state: cur!.state }, result: undefined }));
    for (const id of ['ep-1', 'ep-2']) await store.endpoints.create(id, hashToken('t'), initialRecord());
    await write('ep-1');
    await write('ep-1'); // ep-1 lists two event IDs
    now += 2000;
    expect(await store.changes.prune()).toBe(2); // the log is empty now, ep-1's list is not
    await write('ep-1'); // v3
    await write('ep-2');
    await write('ep-2');
    expect(await store.changes.eventsSince('ep-1', 0, 10)).toHaveLength(1);
    expect((await store.changes.eventsSince('ep-1', 0, 10))[0]!.version).toBe(3);
    expect((await store.changes.eventsSince('ep-2', 0, 10)).map((e) => e.version)).toEqual([1, 2]);
    await store.close();
  });

  it('when more events are past the age limit than one sweep statement deletes, then the sweep deletes them all, in batches', async () => {
    let now = 1_000_000;
    const store = new SqliteEndpointStore(scratchFile(), { clock: () => now, eventWindow: { maxAgeMs: 1000 } });
    const ids = Array.from({ length: 25 }, (_, i) => `ep-${i}`);
    for (const id of [...ids, 'fresh']) await store.endpoints.create(id, hashToken('t'), initialRecord());
    const write = (id: string) =>
      store.endpoints.update(id, (cur) => ({ write: { record: cur!.record, state: cur!.state }, result: undefined }));
    await Promise.all(ids.flatMap((id) => Array.from({ length: 100 }, () => write(id)))); // 2,500 events
    now += 2000;
    await write('fresh'); // a recent event, which stays
    let turns = 0;
    const counting = setInterval(() => turns++, 0);
    expect(await store.changes.prune()).toBe(2500);
    clearInterval(counting);
    expect(turns).toBeGreaterThan(0); // it yielded to the event loop between batches
    expect((await store.changes.eventsSince('fresh', 0, 10)).map((e) => e.version)).toEqual([1]);
    expect(await store.changes.prune()).toBe(0);
    await store.close();
  });

  it('when several stores on one file update one endpoint at once, then no update is lost', async () => {
    const file = scratchFile();
    const stores = [new SqliteEndpointStore(file), new SqliteEndpointStore(file), new SqliteEndpointStore(file)];
    await stores[0]!.endpoints.create('ep-1', hashToken('t'), initialRecord());
    await Promise.all(
      stores.flatMap((store, s) =>
        Array.from({ length: 60 }, (_, i) =>
          store.endpoints.update('ep-1', (cur) => {
            const record = structuredClone(cur!.record);
            record.config.blacklist.push(`${s}-${i}`);
            return { write: { record, state: cur!.state }, result: undefined };
          }),
        ),
      ),
    );
    const fresh = new SqliteEndpointStore(file, { cachedRows: 0 });
    const after = (await fresh.endpoints.get('ep-1'))!;
    expect(after.version).toBe(180);
    expect(new Set(after.record.config.blacklist).size).toBe(180);
    // Each store extends the list of logged events it last wrote only while no other has committed:
    // the window holds the last 100 versions, each with its own record.
    const events = await fresh.changes.eventsSince('ep-1', 0, 1000);
    expect(events.map((e) => e.version)).toEqual(Array.from({ length: 100 }, (_, i) => 81 + i));
    expect(events.map((e) => e.record.config.blacklist.length)).toEqual(events.map((e) => e.version));
    await Promise.all([...stores, fresh].map((store) => store.close()));
  });

  it('stores the token only as a digest', async () => {
    const file = scratchFile();
    const store = new SqliteEndpointStore(file);
    await store.endpoints.create('ep-1', hashToken('cbt_super-secret-token'), initialRecord());
    await store.close();
    const { readFileSync } = await import('node:fs');
    const bytes = Buffer.concat([readFileSync(file), readFileSync(`${file}-wal`, { flag: 'a+' })]);
    expect(bytes.includes('cbt_super-secret-token')).toBe(false);
  });
});

describe('SqliteEndpointStore row cache', () => {
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  /** The server's store and another process's (the CLI's) on one file, with endpoint ep-1 created by the server. */
  const twoProcesses = async (token: string) => {
    const file = scratchFile();
    const server = new SqliteEndpointStore(file);
    const other = new SqliteEndpointStore(file);
    await server.endpoints.create('ep-1', hashToken(token), initialRecord());
    return { server, other, close: () => Promise.all([server.close(), other.close()]) };
  };
  const setContent = (store: SqliteEndpointStore, id: string, content: string) =>
    store.endpoints.update(id, (cur) => {
      const record = structuredClone(cur!.record);
      record.meta.message.content = content;
      return { write: { record, state: cur!.state }, result: undefined };
    });

  it('when another process (the CLI) rotates a token, then the server accepts only the new one from its next turn', async () => {
    const { server, other: cli, close } = await twoProcesses('old');
    expect(Buffer.from((await server.endpoints.get('ep-1'))!.tokenHash)).toEqual(hashToken('old')); // now cached
    await cli.endpoints.setTokenHash('ep-1', hashToken('new'));
    await nextTurn();
    expect(Buffer.from((await server.endpoints.get('ep-1'))!.tokenHash)).toEqual(hashToken('new'));
    await close();
  });

  it('when another process deletes an endpoint, then the server no longer finds it', async () => {
    const { server, other: cli, close } = await twoProcesses('t');
    expect(await server.endpoints.get('ep-1')).toBeDefined();
    await cli.endpoints.delete('ep-1');
    await nextTurn();
    expect(await server.endpoints.get('ep-1')).toBeUndefined();
    await close();
  });

  it('when another process commits in the same turn, then an update still builds on that commit (nothing lost)', async () => {
    const { server, other, close } = await twoProcesses('t');
    await server.endpoints.get('ep-1'); // cached, and this turn's check is done
    await setContent(other, 'ep-1', 'from the other process');
    const seen = await server.endpoints.update('ep-1', (cur) => ({ result: cur!.record.meta.message.content }));
    expect(seen).toBe('from the other process');
    await close();
  });

  it('when an update is rolled back, then reads return the committed record, not the abandoned one', async () => {
    const store = new SqliteEndpointStore(scratchFile());
    await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
    await setContent(store, 'ep-1', 'committed');
    await expect(
      store.endpoints.update('ep-1', (cur) => {
        const record = structuredClone(cur!.record);
        record.meta.message.content = 'abandoned';
        return { write: { record, state: { ...cur!.state, pendingSince: 'not a number' as unknown as number } }, result: undefined };
      }),
    ).rejects.toThrow();
    expect((await store.endpoints.get('ep-1'))!.record.meta.message.content).toBe('committed');
    expect(JSON.parse((await store.endpoints.get('ep-1'))!.recordJson).meta.message.content).toBe('committed');
    await store.close();
  });

  it('when updates of one endpoint share a commit and one of them fails, then the row kept from the commit is the row on disk', async () => {
    const { server, other, close } = await twoProcesses('t');
    const pending = { seq: 7, pendingSince: 1234, queue: [{ n: 7, u: 1, at: 1234, b: 2 }] };
    const results = await Promise.allSettled([
      server.endpoints.update('ep-1', (cur) => ({
        write: { record: { ...cur!.record, meta: { ...cur!.record.meta, trigger: true } }, state: pending },
        result: 1,
      })),
      server.endpoints.update('ep-1', (cur) => ({
        write: { record: cur!.record, state: { seq: 8, pendingSince: 'x' as unknown as number, queue: [] } },
        result: 2,
      })),
      setContent(server, 'ep-1', 'third'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const kept = (await server.endpoints.get('ep-1'))!; // from memory: no other process has committed since
    const onDisk = (await other.endpoints.get('ep-1'))!;
    expect(kept.recordJson).toBe(onDisk.recordJson);
    expect(kept.record.meta.message.content).toBe('third');
    expect([kept.version, kept.state]).toEqual([2, pending]);
    expect([onDisk.version, onDisk.state]).toEqual([2, pending]);
    expect(Buffer.from(kept.tokenHash)).toEqual(hashToken('t'));
    await close();
  });

  it('when the cache is full, then the oldest rows make room and every read is still right', async () => {
    const store = new SqliteEndpointStore(scratchFile(), { cachedRows: 2 });
    for (const id of ['a', 'b', 'c']) await store.endpoints.create(id, hashToken(id), initialRecord());
    for (const id of ['a', 'b', 'c', 'a']) expect(Buffer.from((await store.endpoints.get(id))!.tokenHash)).toEqual(hashToken(id));
    await setContent(store, 'a', 'changed');
    expect((await store.endpoints.get('a'))!.record.meta.message.content).toBe('changed');
    await store.close();
  });

  it('when updates share a turn, then one group commit reports them all with its statements and COMMIT timed; a failed COMMIT reports none', async () => {
    const commits: GroupCommitTiming[] = [];
    const file = scratchFile();
    // Without waiting for another process's lock: the failed COMMIT below comes at once, not after
    // the default 5 s of retries.
    const store = new SqliteEndpointStore(file, { busyTimeoutMs: 0, lockWaitMs: 0 });
    store.observeGroupCommits((c) => commits.push(c));
    for (const id of ['a', 'b', 'c']) await store.endpoints.create(id, hashToken('t'), initialRecord());
    const rewrite = (cur: StoredEndpoint | undefined) => ({ write: { record: cur!.record, state: cur!.state }, result: undefined });
    await Promise.all(['a', 'b', 'c'].map((id) => store.endpoints.update(id, rewrite)));
    await store.endpoints.update('a', rewrite);
    expect(commits.map((c) => c.updates)).toEqual([3, 1]);
    for (const c of commits) {
      expect(c.statementsMs).toBeGreaterThan(0);
      expect(c.commitMs).toBeGreaterThan(0);
    }
    // Another connection holds the write lock past the busy timeout: BEGIN fails, nothing committed, nothing reported.
    const other = new DatabaseSync(file);
    other.exec('PRAGMA busy_timeout = 0; BEGIN IMMEDIATE');
    await expect(store.endpoints.update('b', rewrite)).rejects.toThrow(/locked|busy/i);
    other.exec('ROLLBACK');
    other.close();
    expect(commits).toHaveLength(2);
    await store.close();
  });
});

describe("SqliteEndpointStore and another process's write lock", () => {
  /** Another connection (as another process would) holding the write lock for `ms`. */
  function holdWriteLock(file: string, ms: number): Promise<void> {
    const other = new DatabaseSync(file);
    other.exec('BEGIN IMMEDIATE');
    return new Promise((resolve) =>
      setTimeout(() => {
        other.exec('ROLLBACK');
        other.close();
        resolve();
      }, ms),
    );
  }

  const write = (store: SqliteEndpointStore, id: string, content: string) =>
    store.endpoints.update(id, (current) => ({
      write: {
        record: { ...current!.record, meta: { ...current!.record.meta, message: { ...current!.record.meta.message, content } } },
        state: current!.state,
      },
      result: content,
    }));

  it('when a serving store meets the lock, then its update waits on timers, the event loop keeps turning, and the update commits once the lock is gone', async () => {
    const file = scratchFile();
    const store = new SqliteEndpointStore(file, { busyTimeoutMs: 20 });
    await store.endpoints.create('locked-1', hashToken('t'), initialRecord());
    const released = holdWriteLock(file, 600);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    const started = Date.now();
    const committed = write(store, 'locked-1', 'after the lock');
    await new Promise((r) => setTimeout(r, 300));
    const ticksWhileLocked = ticks;
    await expect(committed).resolves.toBe('after the lock');
    clearInterval(ticker);
    await released;
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    // A 10 ms timer kept firing while the update waited: nothing held the thread for the lock's 600 ms
    // (a wait that held it would let none fire in those 300 ms). 30 fire on an idle machine; a loaded
    // one delays timers, so only a few are asked for.
    expect(ticksWhileLocked).toBeGreaterThanOrEqual(5);
    expect((await store.endpoints.get('locked-1'))!.record.meta.message.content).toBe('after the lock');
    await store.close();
  });

  it('when the lock outlasts lockWaitMs, then the update fails as database is locked (answered 503) and changes nothing', async () => {
    const file = scratchFile();
    const store = new SqliteEndpointStore(file, { busyTimeoutMs: 20, lockWaitMs: 200 });
    await store.endpoints.create('locked-2', hashToken('t'), initialRecord());
    const released = holdWriteLock(file, 800);
    await expect(write(store, 'locked-2', 'never')).rejects.toThrow(/database is locked/);
    await released;
    expect((await store.endpoints.get('locked-2'))!.record.meta.message.content).toBeNull();
    expect(await write(store, 'locked-2', 'later')).toBe('later'); // the store works on afterwards
    await store.close();
  });
});

describe('SqliteEndpointStore on a full disk', () => {
  it('when the database cannot grow, then updates reject as an outage, none is half-applied, reads go on, and writes resume once there is room', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'chatbridge-full-')), 'store.sqlite');
    const store = new SqliteEndpointStore(file);
    // The store's own connection, reached for the test only: a page cap is how SQLite sees a full disk.
    const db = (store as unknown as { database: { db: DatabaseSync } }).database.db;
    try {
      for (let i = 0; i < 20; i++) await store.endpoints.create(`ep-${i}`, hashToken('t'), initialRecord());
      const before = await Promise.all(Array.from({ length: 20 }, (_, i) => store.endpoints.get(`ep-${i}`)));
      const pages = (db.prepare('PRAGMA page_count').get() as { page_count: number }).page_count;
      db.exec(`PRAGMA max_page_count = ${pages}`);
      const big = (cur: StoredEndpoint | undefined) => {
        const record = structuredClone(cur!.record);
        record.config.blacklist = Array.from({ length: 200 }, (_, w) => `word-${w}-${'x'.repeat(20)}`);
        return { write: { record, state: cur!.state }, result: 'written' };
      };
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.endpoints.update(`ep-${i}`, big).catch((e: unknown) => e)),
      );
      const failures = outcomes.filter((o) => o !== 'written');
      expect(failures.length).toBeGreaterThan(0);
      for (const f of failures) expect([String(f), isUnavailable(f)]).toEqual([String(f), true]);
      // What failed left its row as it was; reads still answer.
      for (const [i, o] of outcomes.entries()) {
        const row = await store.endpoints.get(`ep-${i}`);
        if (o !== 'written') expect(row!.recordJson).toBe(before[i]!.recordJson);
        else expect(row!.record.config.blacklist).toHaveLength(200);
      }
      db.exec('PRAGMA max_page_count = 1073741823');
      expect(await store.endpoints.update('ep-0', big)).toBe('written');
    } finally {
      await store.close();
    }
  });
});
