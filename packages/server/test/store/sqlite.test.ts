import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { initialRecord } from '../../src/domain/record.ts';
import { MIGRATIONS, SqliteEndpointStore } from '../../src/store/sqlite.ts';
import { hashToken } from '../../src/tokens.ts';
import { describeStoreContract } from './contract.ts';

const scratchFile = () => join(mkdtempSync(join(tmpdir(), 'chatbridge-sqlite-')), 'store.sqlite');

describeStoreContract('sqlite', async (options) => new SqliteEndpointStore(scratchFile(), options));

describe('SqliteEndpointStore', () => {
  it('when reopened, then committed data is still there (durable file, migrations idempotent)', async () => {
    const file = scratchFile();
    const first = new SqliteEndpointStore(file);
    await first.create('ep-1', hashToken('t'), initialRecord());
    await first.close();
    const second = new SqliteEndpointStore(file);
    expect((await second.get('ep-1'))?.record).toEqual(initialRecord());
    await second.close();
  });

  it('when a file of the first schema is opened, then its endpoints start at version 0 and their changes are logged', async () => {
    const file = scratchFile();
    const old = new DatabaseSync(file);
    old.exec(MIGRATIONS[0]!);
    old.exec('PRAGMA user_version = 1');
    old.prepare('INSERT INTO endpoints (id, token_hash, record) VALUES (?, ?, ?)').run('ep-1', hashToken('t'), JSON.stringify(initialRecord()));
    old.close();
    const store = new SqliteEndpointStore(file);
    expect((await store.get('ep-1'))!.version).toBe(0);
    await store.update('ep-1', (cur) => ({ write: { record: cur!.record, state: cur!.state }, result: undefined }));
    expect((await store.eventsSince('ep-1', 0, 10)).map((e) => e.version)).toEqual([1]);
    await store.close();
  });

  it('stores the token only as a digest', async () => {
    const file = scratchFile();
    const store = new SqliteEndpointStore(file);
    await store.create('ep-1', hashToken('cbt_super-secret-token'), initialRecord());
    await store.close();
    const { readFileSync } = await import('node:fs');
    const bytes = Buffer.concat([readFileSync(file), readFileSync(`${file}-wal`, { flag: 'a+' })]);
    expect(bytes.includes('cbt_super-secret-token')).toBe(false);
  });
});
