// Every CLI command reads its configuration as the server does: the process's environment over the
// working folder's chatbridge.env. Each group of commands (endpoints, bots, export and both imports)
// is run in a folder whose chatbridge.env alone names the store, on SQLite and on PostgreSQL (when
// DATABASE_URL names a server for a scratch database), and what they did is read from that store.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { AppConfig } from '../src/config.ts';
import { openStore } from '../src/store/open.ts';
import { createScratchDatabase, type ScratchDatabase } from './store/pgScratch.ts';

const CLI = join(import.meta.dirname, '..', 'src', 'cli.ts');
const run = promisify(execFile);
const BASE_URL = process.env.DATABASE_URL;
/** A token in the API's format (71 to 85 characters), as the original service's tokens.json holds one. */
const ORIGINAL_TOKEN = `orig_${'Zy8-_'.repeat(15)}`;

/** The process's environment without any setting that names a store: chatbridge.env must name it. */
function environmentWithoutStore(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent' };
  for (const name of ['CHATBRIDGE_STORE', 'CHATBRIDGE_SQLITE_PATH', 'DATABASE_URL', 'CHATBRIDGE_ENV_FILE', 'CHATBRIDGE_DEBUG'])
    delete env[name];
  return env;
}

/** The CLI run in `cwd`, configured by nothing but the chatbridge.env there. */
async function cliIn(cwd: string, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { cwd, env: environmentWithoutStore() });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** A folder with `chatbridge.env` holding `lines`, and a folder in the original service's layout. */
function folderWith(lines: string[]): { dir: string; original: string } {
  const dir = mkdtempSync(join(tmpdir(), 'chatbridge-envfile-cli-'));
  writeFileSync(join(dir, 'chatbridge.env'), `${lines.join('\n')}\n`);
  const original = join(dir, 'original');
  mkdirSync(original);
  writeFileSync(join(original, 'migrated.json'), JSON.stringify({ config: { isbeta: false, 'self-user': false } }));
  writeFileSync(join(original, 'tokens.json'), JSON.stringify({ migrated: ORIGINAL_TOKEN }));
  return { dir, original };
}

/**
 * Runs one command of each group in `dir`, checking what each prints, then what they left in `store`
 * (`named`: the store chatbridge.env names).
 */
async function everyCommandActsOn(dir: string, original: string, named: AppConfig['store']): Promise<void> {
  const ok = async (...args: string[]) => {
    const result = await cliIn(dir, ...args);
    expect(result.code, `chatbridge ${args.join(' ')}: ${result.stderr}`).toBe(0);
    return result;
  };
  expect((await ok('create', 'from-env')).stdout).toContain('created endpoint from-env');
  expect((await ok('bot', 'create', 'bridge-a', '--platform', 'chat_a')).stdout).toContain('created bot bridge-a');
  expect((await ok('import', '--from-original', original)).stdout).toMatch(/^1 imported, 0 unchanged/m);
  expect((await ok('export', 'store.jsonl')).stderr).toContain('exported 2 endpoints and 1 bots to store.jsonl');
  // The export read back into the store it came from: everything is there already.
  expect((await ok('import', 'store.jsonl')).stdout).toContain('0 imported, 2 unchanged; bots: 0 imported, 1 unchanged');

  const store = await openStore(named);
  try {
    expect(await store.endpoints.listIds(undefined, 10)).toEqual(['from-env', 'migrated']);
    expect((await store.bots.list()).map((b) => b.id)).toEqual(['bridge-a']);
  } finally {
    await store.close();
  }
}

// A test here runs the CLI up to five times in a row: 60 s, as a loaded machine needs (as the export
// tests' CLI runs get).
describe('every CLI command reads chatbridge.env', { timeout: 60_000 }, () => {
  it('when chatbridge.env names a SQLite file, then each command acts on that file', async () => {
    const sqlitePath = join(mkdtempSync(join(tmpdir(), 'chatbridge-envfile-store-')), 'named-by-env-file.sqlite');
    const { dir, original } = folderWith(['CHATBRIDGE_STORE=sqlite', `CHATBRIDGE_SQLITE_PATH=${sqlitePath}`]);
    await everyCommandActsOn(dir, original, { kind: 'sqlite', sqlitePath });
  });

  describe.skipIf(!BASE_URL)('PostgreSQL', () => {
    let database: ScratchDatabase | undefined;
    afterAll(async () => {
      await database?.drop();
    });

    it('when chatbridge.env holds DATABASE_URL, then each command acts on that database', async () => {
      database = await createScratchDatabase(BASE_URL!);
      // No CHATBRIDGE_STORE: DATABASE_URL selects PostgreSQL, as it does for the server.
      const { dir, original } = folderWith([`DATABASE_URL=${database.url}`]);
      await everyCommandActsOn(dir, original, { kind: 'postgres', databaseUrl: database.url, poolSize: 1 });
    });
  });

  it('when chatbridge.env sets CHATBRIDGE_DEBUG=1, then a failing command prints its stack trace', async () => {
    // A PostgreSQL server that is not there: the command fails opening the store.
    const { dir } = folderWith(['DATABASE_URL=postgres://nobody@127.0.0.1:1/none', 'CHATBRIDGE_DEBUG=1']);
    const failed = await cliIn(dir, 'list');
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('the store cannot be opened');
    expect(failed.stderr).toMatch(/^\s+at /m);
    expect(failed.stderr).not.toContain('run with --debug');
  });
});
