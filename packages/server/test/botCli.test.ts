// `pnpm chatbridge bot ...`: bot keys provisioned on the configured store, and `create` refusing
// reserved endpoint IDs.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SqliteEndpointStore } from '../src/store/sqlite/store.ts';
import { hashToken } from '../src/tokens.ts';

const SRC = join(import.meta.dirname, '..', 'src');
const run = promisify(execFile);

async function cli(dir: string, ...args: string[]) {
  const env = { ...process.env, CHATBRIDGE_STORE: 'sqlite', CHATBRIDGE_SQLITE_PATH: join(dir, 'store.sqlite'), LOG_LEVEL: 'info' };
  try {
    const { stdout, stderr } = await run(process.execPath, [join(SRC, 'cli.ts'), ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

const keyIn = (stdout: string) => /^key: (\S+)$/m.exec(stdout)?.[1] ?? '';

async function storedBots(dir: string) {
  const store = new SqliteEndpointStore(join(dir, 'store.sqlite'));
  try {
    return (await store.bots.list()).map((b) => ({ id: b.id, platform: b.platform, keyHash: Buffer.from(b.keyHash) }));
  } finally {
    await store.close();
  }
}

describe('chatbridge bot CLI', () => {
  it('when bot create, list, rotate and delete are run, then each acts on the store and only key digests are kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-bot-cli-'));
    const created = await cli(dir, 'bot', 'create', 'bridge-b', '--platform', 'chat_b');
    expect(created.code).toBe(0);
    const key = keyIn(created.stdout);
    expect(key).toMatch(/^cbk_[A-Za-z0-9_-]{72}$/);
    expect(await storedBots(dir)).toEqual([{ id: 'bridge-b', platform: 'chat_b', keyHash: hashToken(key) }]);

    const listed = await cli(dir, 'bot', 'list');
    expect(listed.stdout.trim()).toBe('bridge-b\tchat_b');

    const rotated = await cli(dir, 'bot', 'rotate', 'bridge-b');
    const newKey = keyIn(rotated.stdout);
    expect(newKey).not.toBe(key);
    expect((await storedBots(dir))[0]!.keyHash).toEqual(hashToken(newKey));

    expect((await cli(dir, 'bot', 'delete', 'bridge-b')).code).toBe(0);
    expect(await storedBots(dir)).toEqual([]);
    expect((await cli(dir, 'bot', 'delete', 'bridge-b')).code).toBe(1);
  });

  it('when a bot is created with an unknown platform or without one, then it is refused and nothing is stored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-bot-cli-'));
    expect((await cli(dir, 'bot', 'create', 'bridge-z', '--platform', 'chat_z')).code).not.toBe(0);
    expect((await cli(dir, 'bot', 'create', 'bridge-z')).code).not.toBe(0);
    expect((await cli(dir, 'bot', 'list')).stdout).toBe('');
  });

  it('when create is asked for a reserved endpoint ID, then it refuses naming it and creates nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-bot-cli-'));
    const refused = await cli(dir, 'create', 'lookup');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('reserved');
    expect((await cli(dir, 'list')).stdout).toBe('');
  });
});
