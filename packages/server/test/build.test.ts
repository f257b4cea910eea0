// `pnpm start` runs the server compiled by scripts/build-server.ts, not its TypeScript sources. What
// operators run is that build, so here it is built and started as `pnpm start` starts it (its node
// flags), on each store: it must serve, and on PostgreSQL find the migrations it reads at run time.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createChatbridgeClient } from '@chatbridge/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess } from './processes.ts';
import { createScratchDatabase, type ScratchDatabase } from './store/pgScratch.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const ADMIN_TOKEN = 'build-test-admin-token-0123456789';

/** The server command of the root package.json's start script: its node flags and entry point. */
function startCommand(): { flags: string[]; main: string } {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const words = (scripts.start ?? '').split('&&').pop()!.trim().split(/\s+/);
  const at = words.findIndex((w) => /main\.[jt]s$/.test(w));
  return { flags: words.slice(1, at), main: at === -1 ? '' : words[at]! };
}

/** Creates, reads and updates an endpoint through the admin API and the bots' API. */
async function roundTrip(server: ServerProcess): Promise<void> {
  const client = createChatbridgeClient({ baseUrl: server.url, adminToken: ADMIN_TOKEN });
  const { id, token } = await client.createEndpoint('built');
  const updated = await client.updateEndpoint(id, token, { message_content: 'from the build', log_chat_b: 'log-b' });
  expect(updated.meta.message.content).toBe('from the build');
  const read = await client.getEndpoint(id, token);
  expect(read.config.logs.chat_b).toBe('log-b');
}

describe('the compiled server (what pnpm start runs)', () => {
  // Inside the server package, so that the build resolves its dependencies as dist/ does.
  const out = mkdtempSync(join(ROOT, 'packages', 'server', '.build-test-'));
  const started: ServerProcess[] = [];
  let db: ScratchDatabase | undefined;

  beforeAll(() => {
    execFileSync(process.execPath, ['scripts/build-server.ts', out], { cwd: ROOT, stdio: 'pipe' });
  }, 60_000);

  afterAll(async () => {
    for (const s of started) s.child.kill('SIGKILL');
    await Promise.all(started.map((s) => s.exited));
    rmSync(out, { recursive: true, force: true });
    await db?.drop();
  }, 30_000);

  const start = async (env: Record<string, string>) => {
    const { flags } = startCommand();
    const server = await startServerProcess({ CHATBRIDGE_ADMIN_TOKEN: ADMIN_TOKEN, ...env }, join(out, 'main.js'), flags);
    started.push(server);
    return server;
  };

  it('when pnpm start runs, then it starts the compiled main.js, not the sources', () => {
    expect(startCommand().main).toBe('packages/server/dist/main.js');
    expect(existsSync(join(out, 'main.js'))).toBe(true);
    expect(existsSync(join(out, 'main.ts'))).toBe(false);
  });

  it('when the build starts on SQLite, then it serves an endpoint end to end', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-build-'));
    await roundTrip(await start({ CHATBRIDGE_SQLITE_PATH: join(dir, 'store.sqlite') }));
  });

  it.runIf(!!process.env.DATABASE_URL)(
    'when the build starts on an empty PostgreSQL database, then it runs the migrations it was shipped with and serves',
    async () => {
      db = await createScratchDatabase(process.env.DATABASE_URL!);
      await roundTrip(await start({ CHATBRIDGE_STORE: 'postgres', DATABASE_URL: db.url }));
    },
  );
});
