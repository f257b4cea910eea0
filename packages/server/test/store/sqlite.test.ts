import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { initialRecord } from '../../src/domain/record.ts';
import { SqliteEndpointStore } from '../../src/store/sqlite.ts';
import { hashToken } from '../../src/tokens.ts';
import { describeStoreContract } from './contract.ts';

const scratchFile = () => join(mkdtempSync(join(tmpdir(), 'chatbridge-sqlite-')), 'store.sqlite');

describeStoreContract('sqlite', async () => new SqliteEndpointStore(scratchFile()));

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
