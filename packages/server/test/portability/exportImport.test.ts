// Moving a store: `chatbridge export` and `chatbridge import`, SQLite -> PostgreSQL -> SQLite, and
// what an import refuses. PostgreSQL cases run when DATABASE_URL is set (a scratch database each).
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createBot } from '../../src/admin/bots.ts';
import { createEndpoint } from '../../src/admin/endpoints.ts';
import { type Platform, initialRecord } from '../../src/domain/record.ts';
import type { EndpointSnapshot, EndpointStore } from '../../src/store/port.ts';
import { PostgresEndpointStore } from '../../src/store/postgres/store.ts';
import { SqliteEndpointStore } from '../../src/store/sqlite/store.ts';
import { startTestServer } from '../../src/testing.ts';
import { CONVERSATION_LOG, arrangeConversation } from '../store/conversation.ts';
import { createScratchDatabase, type ScratchDatabase } from '../store/pgScratch.ts';
import { chatbridge } from './cliRun.ts';

const BASE_URL = process.env.DATABASE_URL;
const scratch = () => mkdtempSync(join(tmpdir(), 'chatbridge-move-'));

async function withSqlite<T>(file: string, work: (store: SqliteEndpointStore) => Promise<T>): Promise<T> {
  const store = new SqliteEndpointStore(file);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

async function snapshotsOf(store: EndpointStore) {
  const rows: EndpointSnapshot[] = [];
  for await (const row of store.snapshot.exportRows()) rows.push({ ...row, tokenHash: Buffer.from(row.tokenHash) });
  return rows;
}

/** A bot key issued on the first store; a move must keep it working. */
let botKey = '';

/**
 * A store with what a move must carry: endpoints with changed configs (versions past 0), one with a
 * pending message (message number 4, a read flag, two queued deliveries, one attempted), and a bot for
 * chat_a (its key in `botKey`). Returns the endpoints' tokens.
 */
async function arrange(store: EndpointStore): Promise<Record<string, string>> {
  const tokens: Record<string, string> = {};
  for (const id of ['community-1', 'community-2', 'idle-3']) tokens[id] = (await createEndpoint(store, id))!.token;
  const bot = await createBot(store, 'bridge-a', 'chat_a');
  if (bot.kind !== 'created') throw new Error('the bot was not created');
  botKey = bot.issued.key;
  await store.endpoints.update('community-1', (cur) => {
    const record = structuredClone(cur!.record);
    record.config.channels.chat_a.push('912345678901234001');
    record.config.webhooks.chat_a.push('https://chat-a.example.com/api/webhooks/1/secret-of-the-webhook-0000');
    record.config.blacklist.push('spam', 'ünïcödé');
    record.config['self-user'] = true;
    return { write: { record, state: cur!.state }, result: undefined };
  });
  await store.endpoints.update('community-2', (cur) => {
    const record = structuredClone(cur!.record);
    record.meta.trigger = true;
    record.meta.sender = 'chat_c';
    record.meta.read.chat_c = true;
    record.meta.message.content = 'pending while the store moved';
    const deliveries = (['chat_a', 'chat_b'] as const).map((platform) => ({
      platform,
      url: `https://${platform}.example.com/api/webhooks/2/secret-of-the-webhook-0000`,
      payload: JSON.stringify({ content: 'pending while the store moved' }),
      expiresAt: 4_000_000_000_000,
    }));
    const at = 3_999_999_990_000;
    const bytes = Buffer.byteLength(JSON.stringify(record.meta.message));
    // chat_a and chat_b have still to read message 4, which the log keeps.
    const logged = {
      number: 4,
      sender: 'chat_c' as const,
      senderChannel: null,
      message: JSON.stringify(record.meta.message),
      unread: 3,
      createdAt: at,
    };
    return {
      write: {
        record,
        state: { seq: 4, pendingSince: at, queue: [{ n: 4, u: 3, at, b: bytes }] },
        deliveries,
        messages: { append: logged },
      },
      result: undefined,
    };
  });
  const [claimed] = await store.deliveries.claim(3_999_999_991_000, 1000, { chat_a: 1 });
  await store.deliveries.retry(claimed!.id, 3_999_999_992_000);
  return tokens;
}

/** Every endpoint answers its original token with its record, through the HTTP API over `store`. */
async function expectTokensRead(store: EndpointStore, tokens: Record<string, string>): Promise<void> {
  const server = await startTestServer({ store });
  try {
    for (const [id, token] of Object.entries(tokens)) {
      const response = await fetch(`${server.url}/${id}?token=${token}`);
      expect([id, response.status]).toEqual([id, 200]);
      expect(await response.json()).toEqual((await store.endpoints.get(id))!.record);
      const wrong = `${token.slice(0, -1)}${token.endsWith('x') ? 'y' : 'x'}`;
      expect((await fetch(`${server.url}/${id}?token=${wrong}`)).status).toBe(401);
    }
    // The bot key issued before the export: it finds community-1 by its chat_a channel, and acts on it.
    const asBot = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
    const lookup = await fetch(`${server.url}/lookup?platform=chat_a&channel=912345678901234001`, asBot(botKey));
    expect(lookup.status).toBe(200);
    expect(await lookup.json()).toEqual({ matches: [{ endpoint: 'community-1', bridge: 0 }], truncated: false });
    expect((await fetch(`${server.url}/community-1`, asBot(botKey))).status).toBe(200);
    // A key acts only where its platform takes part: idle-3 has no chat_a channel.
    expect((await fetch(`${server.url}/idle-3`, asBot(botKey))).status).toBe(401);
    const wrongKey = `${botKey.slice(0, -1)}${botKey.endsWith('x') ? 'y' : 'x'}`;
    expect((await fetch(`${server.url}/lookup?platform=chat_a&channel=912345678901234001`, asBot(wrongKey))).status).toBe(401);
  } finally {
    await server.close();
  }
}

/**
 * The conversation (test/store/conversation.ts) on `store`: each of its IDs finds its message, the
 * endpoint's last change is the delete, and its webhook's queue gives the edit of message 1's copy
 * and, once that is done, the delete of message 2's.
 */
async function expectConversation(store: EndpointStore): Promise<void> {
  for (const message of CONVERSATION_LOG) {
    for (const [platform, id] of Object.entries(message.ids)) {
      expect(await store.messages.find('conversation-1', platform as Platform, id)).toEqual(message);
    }
  }
  expect((await store.endpoints.get('conversation-1'))!.lastChange).toBe('delete');
  expect(await store.deliveries.count()).toBe(2);
  const now = Date.now();
  const first = await store.deliveries.claim(now, 1000, 10);
  expect(first.map((d) => [d.kind, d.seq, d.platform])).toEqual([['edit', 1, 'chat_a']]);
  await store.deliveries.complete(first[0]!, () => ({ result: undefined }));
  const second = await store.deliveries.claim(now, 1000, 10);
  expect(second.map((d) => [d.kind, d.seq, d.platform, d.payload])).toEqual([['delete', 2, 'chat_a', '']]);
}

describe('chatbridge export and import', () => {
  const databases: ScratchDatabase[] = [];
  afterAll(async () => {
    for (const db of databases) await db.drop();
  });

  it.runIf(!!BASE_URL)(
    'when a SQLite store is moved to PostgreSQL and back, then records, token digests, message state, versions, deliveries and bots are identical and every original token and bot key still authenticates',
    async () => {
      const dir = scratch();
      const first = join(dir, 'first.sqlite');
      const last = join(dir, 'last.sqlite');
      const db = await createScratchDatabase(BASE_URL!);
      databases.push(db);
      const { tokens, original, bots } = await withSqlite(first, async (store) => ({
        tokens: await arrange(store),
        original: await snapshotsOf(store),
        bots: await store.bots.list(),
      }));
      // The tokens and the bot key work before the move (on a copy: a server works on the pending deliveries).
      copyFileSync(first, join(dir, 'copy.sqlite'));
      await withSqlite(join(dir, 'copy.sqlite'), (store) => expectTokensRead(store, tokens));

      const exported = await chatbridge(first, 'export', join(dir, 'from-sqlite.jsonl'));
      expect(exported.code).toBe(0);
      const text = readFileSync(join(dir, 'from-sqlite.jsonl'), 'utf8');
      for (const token of [...Object.values(tokens), botKey]) expect(text).not.toContain(token);
      expect(await chatbridge(db.url, 'import', join(dir, 'from-sqlite.jsonl'))).toMatchObject({
        code: 0,
        stdout: '3 imported, 0 unchanged; bots: 1 imported, 0 unchanged\n',
      });

      // From PostgreSQL to standard output, as an operator may pipe it.
      const fromPg = await chatbridge(db.url, 'export');
      expect(fromPg.code).toBe(0);
      writeFileSync(join(dir, 'from-pg.jsonl'), fromPg.stdout);
      const body = (t: string) => t.trim().split('\n').slice(1);
      expect(body(fromPg.stdout)).toEqual(body(text));

      // Read over HTTP after the export: a running server works on the pending message's deliveries.
      const pg = await PostgresEndpointStore.open({ connectionString: db.url });
      try {
        expect(await snapshotsOf(pg)).toEqual(original);
        expect(await pg.bots.list()).toEqual(bots.map((b) => ({ ...b, keyHash: Buffer.from(b.keyHash) })));
        await expectTokensRead(pg, tokens);
      } finally {
        await pg.close();
      }

      expect(await chatbridge(last, 'import', join(dir, 'from-pg.jsonl'))).toMatchObject({
        code: 0,
        stdout: '3 imported, 0 unchanged; bots: 1 imported, 0 unchanged\n',
      });

      await withSqlite(last, async (store) => {
        expect(await snapshotsOf(store)).toEqual(original);
        expect(await store.bots.list()).toEqual(bots);
        await expectTokensRead(store, tokens);
      });
    },
    60_000, // three stores, four CLI runs and three servers
  );

  it.runIf(!!BASE_URL)(
    'when a store with message IDs, an edit, a delete, a native reply and queued edit and delete calls moves SQLite -> PostgreSQL -> SQLite, then all of it is kept on each store, every ID finds its message, and importing the same file again changes nothing',
    async () => {
      const dir = scratch();
      const first = join(dir, 'first.sqlite');
      const last = join(dir, 'last.sqlite');
      const db = await createScratchDatabase(BASE_URL!);
      databases.push(db);
      const original = await withSqlite(first, async (store) => {
        await createEndpoint(store, 'conversation-1');
        await arrangeConversation(store, 'conversation-1');
        return snapshotsOf(store);
      });
      const once = '1 imported, 0 unchanged; bots: 0 imported, 0 unchanged\n';
      const again = '0 imported, 1 unchanged; bots: 0 imported, 0 unchanged\n';

      expect((await chatbridge(first, 'export', join(dir, 'from-sqlite.jsonl'))).code).toBe(0);
      const text = readFileSync(join(dir, 'from-sqlite.jsonl'), 'utf8');
      expect(JSON.parse(text.split('\n')[0]!)).toMatchObject({ version: 4 });
      expect(await chatbridge(db.url, 'import', join(dir, 'from-sqlite.jsonl'))).toMatchObject({ code: 0, stdout: once });
      expect(await chatbridge(db.url, 'import', join(dir, 'from-sqlite.jsonl'))).toMatchObject({ code: 0, stdout: again });
      const fromPg = await chatbridge(db.url, 'export');
      expect(fromPg.code).toBe(0);
      writeFileSync(join(dir, 'from-pg.jsonl'), fromPg.stdout);
      const body = (t: string) => t.trim().split('\n').slice(1);
      expect(body(fromPg.stdout)).toEqual(body(text));

      const pg = await PostgresEndpointStore.open({ connectionString: db.url });
      try {
        expect(await snapshotsOf(pg)).toEqual(original);
        await expectConversation(pg);
      } finally {
        await pg.close();
      }

      expect(await chatbridge(last, 'import', join(dir, 'from-pg.jsonl'))).toMatchObject({ code: 0, stdout: once });
      expect(await chatbridge(last, 'import', join(dir, 'from-pg.jsonl'))).toMatchObject({ code: 0, stdout: again });
      await withSqlite(last, async (store) => {
        expect(await snapshotsOf(store)).toEqual(original);
        await expectConversation(store);
      });
    },
    60_000, // three stores and seven CLI runs
  );

  it('when the same file is imported again, then nothing changes and it says 0 imported, 3 unchanged, and the bot unchanged', async () => {
    const dir = scratch();
    const source = join(dir, 'source.sqlite');
    const target = join(dir, 'target.sqlite');
    await withSqlite(source, arrange);
    await chatbridge(source, 'export', join(dir, 'export.jsonl'));
    expect((await chatbridge(target, 'import', join(dir, 'export.jsonl'))).code).toBe(0);
    const before = await withSqlite(target, snapshotsOf);
    const botsBefore = await withSqlite(target, (store) => store.bots.list());
    expect(await chatbridge(target, 'import', join(dir, 'export.jsonl'))).toMatchObject({
      code: 0,
      stdout: '0 imported, 3 unchanged; bots: 0 imported, 1 unchanged\n',
    });
    expect(await withSqlite(target, snapshotsOf)).toEqual(before);
    expect(await withSqlite(target, (store) => store.bots.list())).toEqual(botsBefore);
  });

  it('when a bot exists in the store with another key, then the import exits 1 naming it and writes nothing, endpoints included', async () => {
    const dir = scratch();
    const source = join(dir, 'source.sqlite');
    const target = join(dir, 'target.sqlite');
    await withSqlite(source, arrange);
    await chatbridge(source, 'export', join(dir, 'export.jsonl'));
    await withSqlite(target, (store) => createBot(store, 'bridge-a', 'chat_a')); // another key
    const result = await chatbridge(target, 'import', join(dir, 'export.jsonl'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^conflict: bot bridge-a /m);
    expect(await withSqlite(target, snapshotsOf)).toEqual([]);
  });

  it("when a version 1 file (endpoints only, from the previous release) is imported, then its endpoints are, and a pending message becomes the first of its endpoint's log", async () => {
    const dir = scratch();
    const source = join(dir, 'source.sqlite');
    await withSqlite(source, arrange);
    await chatbridge(source, 'export', join(dir, 'export.jsonl'));
    const lines = readFileSync(join(dir, 'export.jsonl'), 'utf8').trim().split('\n');
    const v1 = [
      lines[0]!.replace('"version":4', '"version":1'),
      // A version 1 endpoint line: no message log, no queue, deliveries of the pending message only.
      ...lines
        .filter((l) => l.startsWith('{"type":"endpoint"'))
        .map((l) => {
          const { queue: _q, messages: _m, lastChange: _c, ...v1 } = JSON.parse(l) as Record<string, unknown>;
          const deliveries = (v1.deliveries as { messageSeq?: number; kind?: string }[]).map(({ messageSeq: _s, kind: _k, ...d }) => d);
          return JSON.stringify({ ...v1, deliveries });
        }),
      JSON.stringify({ type: 'end', endpoints: 3 }),
    ];
    writeFileSync(join(dir, 'v1.jsonl'), `${v1.join('\n')}\n`);
    const target = join(dir, 'target.sqlite');
    expect(await chatbridge(target, 'import', join(dir, 'v1.jsonl'))).toMatchObject({ code: 0, stdout: '3 imported, 0 unchanged\n' });
    const imported = await withSqlite(target, snapshotsOf);
    expect(imported.map((r) => r.id)).toEqual(['community-1', 'community-2', 'idle-3']);
    const pending = imported.find((r) => r.id === 'community-2')!;
    // Unread by every platform whose read flag the record has false: chat_a, chat_b and chat_d.
    expect(pending.state.queue.map((q) => [q.n, q.u])).toEqual([[4, 11]]);
    expect(pending.messages.map((m) => [m.number, m.unread, JSON.parse(m.message).content])).toEqual([
      [4, 11, 'pending while the store moved'],
    ]);
  });

  it('when a version 3 file (the message log without IDs, edits, deletes or outbox kinds) is imported, then every message and delivery takes the defaults and the store reads as the one exported', async () => {
    const dir = scratch();
    const source = join(dir, 'source.sqlite');
    const original = await withSqlite(source, async (store) => {
      await arrange(store);
      return snapshotsOf(store);
    });
    await chatbridge(source, 'export', join(dir, 'export.jsonl'));
    const lines = readFileSync(join(dir, 'export.jsonl'), 'utf8').trim().split('\n');
    const v3 = lines.map((l, i) => {
      if (i === 0) return l.replace('"version":4', '"version":3');
      if (!l.startsWith('{"type":"endpoint"')) return l;
      // A version 3 endpoint line: no last change, no kinds, messages without IDs, reply, edits or delete.
      type Members = Record<string, unknown>;
      const { lastChange: _c, ...line } = JSON.parse(l) as { lastChange: string; deliveries: Members[]; messages: Members[] };
      const deliveries = line.deliveries.map(({ kind: _k, ...d }) => d);
      const messages = line.messages.map(({ ids: _i, replyTo: _r, edits: _e, editedAt: _a, deletedAt: _d, ...m }) => m);
      return JSON.stringify({ ...line, deliveries, messages });
    });
    expect(v3.join('\n')).not.toMatch(/"(kind|lastChange|ids|replyTo|edits|editedAt|deletedAt)"/);
    writeFileSync(join(dir, 'v3.jsonl'), `${v3.join('\n')}\n`);
    const target = join(dir, 'target.sqlite');
    expect(await chatbridge(target, 'import', join(dir, 'v3.jsonl'))).toMatchObject({
      code: 0,
      stdout: '3 imported, 0 unchanged; bots: 1 imported, 0 unchanged\n',
    });
    // The source had none of what version 4 added: the defaults are exactly what it had.
    expect(await withSqlite(target, snapshotsOf)).toEqual(original);
  });

  it('when a store with message IDs, an edit, a delete, a native reply and queued edit and delete calls is imported twice, then the second import changes nothing and every ID still finds its message', async () => {
    const dir = scratch();
    const source = join(dir, 'source.sqlite');
    const target = join(dir, 'target.sqlite');
    const original = await withSqlite(source, async (store) => {
      await createEndpoint(store, 'conversation-1');
      await arrangeConversation(store, 'conversation-1');
      return snapshotsOf(store);
    });
    await chatbridge(source, 'export', join(dir, 'export.jsonl'));
    const once = '1 imported, 0 unchanged; bots: 0 imported, 0 unchanged\n';
    const again = '0 imported, 1 unchanged; bots: 0 imported, 0 unchanged\n';
    expect(await chatbridge(target, 'import', join(dir, 'export.jsonl'))).toMatchObject({ code: 0, stdout: once });
    expect(await chatbridge(target, 'import', join(dir, 'export.jsonl'))).toMatchObject({ code: 0, stdout: again });
    await withSqlite(target, async (store) => {
      expect(await snapshotsOf(store)).toEqual(original);
      await expectConversation(store);
    });
  });

  it('when some endpoints exist in the store with other content, then the import exits 1 naming each and writes nothing', async () => {
    const dir = scratch();
    const source = join(dir, 'source.sqlite');
    const target = join(dir, 'target.sqlite');
    await withSqlite(source, arrange);
    await chatbridge(source, 'export', join(dir, 'export.jsonl'));
    await withSqlite(target, async (store) => {
      await createEndpoint(store, 'community-2'); // another token
      await createEndpoint(store, 'idle-3');
    });
    const result = await chatbridge(target, 'import', join(dir, 'export.jsonl'));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/conflict: endpoint community-2 /);
    expect(result.stderr).toMatch(/conflict: endpoint idle-3 /);
    expect((await withSqlite(target, snapshotsOf)).map((r) => r.id)).toEqual(['community-2', 'idle-3']);
  });

  it('when a line is invalid, an ID repeats or the file is cut short, then it exits 1 naming the lines and writes nothing', async () => {
    const dir = scratch();
    const source = join(dir, 'source.sqlite');
    await withSqlite(source, arrange);
    await chatbridge(source, 'export', join(dir, 'export.jsonl'));
    const lines = readFileSync(join(dir, 'export.jsonl'), 'utf8').trim().split('\n');
    const broken = JSON.parse(lines[3]!);
    broken.record.config.isbeta = 'yes';
    const cases: [string, string[], RegExp][] = [
      [
        'bad-record',
        [lines[0]!, lines[1]!, lines[2]!, JSON.stringify(broken), lines[4]!, lines[5]!],
        /line 4 \(endpoint idle-3\): record\/config\/isbeta/,
      ],
      [
        'repeated',
        [lines[0]!, lines[1]!, lines[1]!, lines[2]!, lines[3]!, lines[4]!, lines[5]!.replace('"endpoints":3', '"endpoints":4')],
        /line 3 \(endpoint community-1\)/,
      ],
      ['cut-short', lines.slice(0, 3), /line 3: .*end line/],
      ['newer-version', [lines[0]!.replace('"version":4', '"version":5'), ...lines.slice(1)], /line 1: export version 5/],
      [
        'bot-before-endpoints',
        [lines[0]!, lines[4]!, lines[1]!, lines[2]!, lines[3]!, lines[5]!],
        /line 3: this endpoint line comes after the bot lines/,
      ],
      [
        'bot-uncounted',
        [lines[0]!, lines[1]!, lines[2]!, lines[3]!, lines[4]!, lines[5]!.replace('"bots":1', '"bots":0')],
        /counts 0 bots, the file holds 1/,
      ],
    ];
    for (const [name, content, problem] of cases) {
      const target = join(dir, `${name}.sqlite`);
      writeFileSync(join(dir, `${name}.jsonl`), `${content.join('\n')}\n`);
      const result = await chatbridge(target, 'import', join(dir, `${name}.jsonl`));
      expect([name, result.code]).toEqual([name, 1]);
      expect(result.stderr).toMatch(problem);
      expect(await withSqlite(target, snapshotsOf)).toEqual([]);
    }
  }, 60_000); // six imports, each a CLI process

  it('when a record in the file is not what the store committed, then the file is still read as the records it holds', async () => {
    // Key order and spacing differ from the stores' JSON.stringify: the import writes the record as the stores would.
    const dir = scratch();
    const record = initialRecord();
    const line = {
      type: 'endpoint',
      id: 'hand-made',
      tokenSha256: '0'.repeat(64),
      messageSeq: 0,
      pendingSince: null,
      version: 0,
      deliveries: [],
      record,
    };
    const header = { format: 'chatbridge-export', version: 1, exportedAt: new Date(0).toISOString(), source: 'hand' };
    writeFileSync(
      join(dir, 'hand.jsonl'),
      [JSON.stringify(header), JSON.stringify(line, null, 0), JSON.stringify({ type: 'end', endpoints: 1 })].join('\n'),
    );
    expect((await chatbridge(join(dir, 'store.sqlite'), 'import', join(dir, 'hand.jsonl'))).code).toBe(0);
    await withSqlite(join(dir, 'store.sqlite'), async (store) =>
      expect((await store.endpoints.get('hand-made'))!.recordJson).toBe(JSON.stringify(record)),
    );
  });
});
