// The message log's copies' IDs, edits and deletes, and the outbox's and event log's kinds, on both
// stores: what the relay and the handlers of getMessage, editMessage and deleteMessage rely on.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MessageLogWrite } from '../../src/domain/messageQueue.ts';
import { initialRecord } from '../../src/domain/record.ts';
import type { Decision, DeliveryDraft } from '../../src/domain/row.ts';
import type { EndpointStore, StoredEndpoint } from '../../src/store/port.ts';
import { PostgresEndpointStore } from '../../src/store/postgres/store.ts';
import { SqliteEndpointStore } from '../../src/store/sqlite/store.ts';
import { hashToken } from '../../src/tokens.ts';
import { createScratchDatabase, type ScratchDatabase } from './pgScratch.ts';

const BASE_URL = process.env.DATABASE_URL;
const HOOK = 'https://chat-a.example.com/api/webhooks/1/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

const databases: ScratchDatabase[] = [];
afterAll(async () => {
  await Promise.all(databases.map((d) => d.drop()));
});

const stores: [string, () => Promise<EndpointStore>][] = [
  ['sqlite', async () => new SqliteEndpointStore(join(mkdtempSync(join(tmpdir(), 'chatbridge-ids-')), 'store.sqlite'))],
];
if (BASE_URL) {
  stores.push([
    'postgres',
    async () => {
      const db = await createScratchDatabase(BASE_URL);
      databases.push(db);
      return PostgresEndpointStore.open({ connectionString: db.url });
    },
  ]);
}

describe.each(stores)('message IDs, edits and deletes (%s)', (_name, open) => {
  let store: EndpointStore;
  beforeEach(async () => {
    store = await open();
    await store.endpoints.create('ep', hashToken('t'), initialRecord());
  });
  afterEach(async () => {
    await store.close();
  });

  /** Writes the row as it is, with these log writes, deliveries and event. */
  const write = (messages: MessageLogWrite, extra: Partial<NonNullable<Decision<undefined>['write']>> = {}) =>
    store.endpoints.update('ep', (cur: StoredEndpoint | undefined) => ({
      write: {
        record: cur!.record,
        state: { seq: Math.max(cur!.state.seq, messages.append?.number ?? 0), pendingSince: null, queue: [] },
        messages,
        ...extra,
      },
      result: undefined,
    }));
  const append = (number: number, ids: { platform: 'chat_a' | 'chat_c' | 'chat_d'; id: string }[] = []) =>
    write({
      append: { number, sender: 'chat_c', senderChannel: 'c-1', message: `{"content":"m${number}"}`, unread: 0, createdAt: 1000 + number },
      ids: ids.map((i) => ({ number, ...i })),
    });

  it('when copies report IDs, then any of them finds the message, an ID stays with its first message, and a copy keeps its newest ID', async () => {
    await append(1, [{ platform: 'chat_c', id: 'c-1' }]);
    await write({ ids: [{ number: 1, platform: 'chat_a', id: 'a-1' }] });
    await write({ ids: [{ number: 1, platform: 'chat_d', id: 'd-1' }] });
    for (const [platform, id] of [
      ['chat_a', 'a-1'],
      ['chat_c', 'c-1'],
      ['chat_d', 'd-1'],
    ] as const) {
      expect((await store.messages.find('ep', platform, id))?.number).toBe(1);
    }
    expect((await store.messages.get('ep', 1))?.ids).toEqual({ chat_a: 'a-1', chat_c: 'c-1', chat_d: 'd-1' });
    // Another message cannot take c-1; chat_d's copy reported anew replaces d-1.
    await append(2, [{ platform: 'chat_c', id: 'c-1' }]);
    expect((await store.messages.find('ep', 'chat_c', 'c-1'))?.number).toBe(1);
    expect((await store.messages.get('ep', 2))?.ids).toEqual({});
    await write({ ids: [{ number: 1, platform: 'chat_d', id: 'd-1b' }] });
    expect(await store.messages.find('ep', 'chat_d', 'd-1')).toBeUndefined();
    expect((await store.messages.find('ep', 'chat_d', 'd-1b'))?.number).toBe(1);
    // A listing carries every message's IDs; an ID is per platform (a-1 on chat_c is another ID).
    expect((await store.messages.list('ep', 0, 10)).map((m) => m.ids)).toEqual([{ chat_a: 'a-1', chat_c: 'c-1', chat_d: 'd-1b' }, {}]);
    expect(await store.messages.find('ep', 'chat_c', 'a-1')).toBeUndefined();
  });

  it('when a message is edited and then deleted, then the log counts the edits, keeps no text after the delete, and refuses edits after it', async () => {
    await append(1, [{ platform: 'chat_c', id: 'c-1' }]);
    await write({ rewrite: { number: 1, message: '{"content":"edited"}', at: 5000, deleted: false } });
    expect(await store.messages.get('ep', 1)).toMatchObject({ message: '{"content":"edited"}', edits: 1, editedAt: 5000, deletedAt: null });
    await write({ rewrite: { number: 1, message: '{"content":null}', at: 6000, deleted: true } });
    await write({ rewrite: { number: 1, message: '{"content":"again"}', at: 7000, deleted: false } });
    expect(await store.messages.get('ep', 1)).toMatchObject({
      message: '{"content":null}',
      edits: 1,
      deletedAt: 6000,
      ids: { chat_c: 'c-1' },
    });
  });

  it("when the endpoint is deleted, then its messages' IDs go with them", async () => {
    await append(1, [{ platform: 'chat_c', id: 'c-1' }]);
    await store.endpoints.delete('ep');
    await store.endpoints.create('ep', hashToken('t'), initialRecord());
    expect(await store.messages.find('ep', 'chat_c', 'c-1')).toBeUndefined();
    await append(1, [{ platform: 'chat_c', id: 'c-1' }]);
    expect((await store.messages.find('ep', 'chat_c', 'c-1'))?.number).toBe(1);
  });

  it('when an edit is written, then its event carries the edit, the row says so, and the next write is a record again', async () => {
    await append(1);
    await write({}, { event: { kind: 'edit', json: '{"number":1,"ids":{},"edits":1}' } });
    const row = await store.endpoints.get('ep');
    expect(row?.lastChange).toBe('edit');
    const events = await store.changes.eventsSince('ep', row!.version - 1, 10);
    expect(events.map((e) => [e.kind, e.recordJson])).toEqual([['edit', '{"number":1,"ids":{},"edits":1}']]);
    await write({});
    const next = await store.endpoints.get('ep');
    expect(next?.lastChange).toBe('record');
    expect((await store.changes.eventsSince('ep', next!.version - 1, 10))[0]).toMatchObject({ kind: 'record', record: initialRecord() });
  });

  it('when a create, an edit and a delete of one message wait for one webhook, then they are handed out in that order, and an idle endpoint keeps its edits and deletes', async () => {
    const draft = (kind: DeliveryDraft['kind'], number?: number): DeliveryDraft => ({
      kind,
      ...(number !== undefined && { number }),
      platform: 'chat_a',
      url: HOOK,
      payload: `{"kind":"${kind}"}`,
      expiresAt: 1_000_000,
    });
    await store.endpoints.update('ep', (cur) => ({
      write: {
        record: cur!.record,
        state: { seq: 1, pendingSince: 1000, queue: [{ n: 1, u: 1, at: 1000, b: 1 }] },
        deliveries: [draft('create')],
      },
      result: undefined,
    }));
    // The edit and delete go in while the endpoint turns idle (nothing unread): only creates are dropped then.
    await store.endpoints.update('ep', (cur) => ({
      write: {
        record: cur!.record,
        state: { seq: 1, pendingSince: 1000, queue: [{ n: 1, u: 1, at: 1000, b: 1 }] },
        deliveries: [draft('edit', 1), draft('delete', 1)],
      },
      result: undefined,
    }));
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      const [d] = await store.deliveries.claim(2000 + i, 60_000, 10);
      expect(d).toBeDefined();
      order.push(`${d!.kind}:${d!.seq}`);
      await store.deliveries.complete(d!, () => ({ result: undefined }));
    }
    expect(order).toEqual(['create:1', 'edit:1', 'delete:1']);

    await store.endpoints.update('ep', (cur) => ({
      write: {
        record: cur!.record,
        state: { seq: 1, pendingSince: 1000, queue: [{ n: 1, u: 1, at: 1000, b: 1 }] },
        deliveries: [draft('create', 2), draft('edit', 1)],
      },
      result: undefined,
    }));
    await store.endpoints.update('ep', (cur) => ({
      write: { record: cur!.record, state: { seq: 1, pendingSince: null, queue: [] } },
      result: undefined,
    }));
    const left = await store.deliveries.claim(3000, 60_000, 10);
    expect(left.map((d) => d.kind)).toEqual(['edit']);
  });
});
