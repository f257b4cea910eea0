// The documentation is tested: every shell example of README.md and docs/*.md that talks to a server
// (see shellExamples.ts for which, and how a block is marked illustrative) is run by bash against one
// real server, in document order, so an example that fails as written fails the build. Placeholders
// are filled in: the server's address for http://127.0.0.1:8080, $TOKEN (the token the example's
// `pnpm chatbridge create` printed), $KEY (the bot key `bot create` printed), $ADMIN (the admin token),
// postgres://… (a scratch database, when DATABASE_URL names a server for them). `pnpm chatbridge` is
// the CLI it stands for (node packages/server/src/cli.ts), on the server's store. What examples name
// without creating (community-1 bridging chat_b channel 22222, community-3 with message 7 pending) is
// arranged first, as the README's prose describes it.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, type ScratchDatabase } from '../../packages/server/test/store/pgScratch.ts';
import { allShellExamples, shellExamples } from './shellExamples.ts';
import { startedServer } from './startedServer.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const SERVER_SRC = join(ROOT, 'packages', 'server', 'src');
const ADMIN = 'docs-test-admin-token-0123456789';
const DATABASE_URL = process.env.DATABASE_URL;

let scratch = '';
let server: ChildProcess | undefined;
let url = '';
let database: ScratchDatabase | undefined;
/** What the examples printed so far: the endpoint token and bot key later examples use. */
const printed = { TOKEN: '', KEY: '' };

const serverEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CHATBRIDGE_STORE: 'sqlite',
    CHATBRIDGE_SQLITE_PATH: join(scratch, 'store.sqlite'),
    CHATBRIDGE_ADMIN_TOKEN: ADMIN,
    CHATBRIDGE_MESSAGE_TTL_SECONDS: '3600', // community-3's message 7 stays pending through the run
    LOG_LEVEL: 'warn',
  };
  delete env.DATABASE_URL;
  return env;
};

/**
 * bash, with `curl` failing on HTTP errors (a stream, `curl -N`, is read for two seconds, then
 * counted a success if it was answered 200), and `pnpm chatbridge` as the CLI it runs.
 */
const PRELUDE = String.raw`set -euo pipefail
curl() {
  local a stream=0
  for a in "$@"; do [ "$a" = -N ] && stream=1; done
  if [ "$stream" = 1 ]; then
    command curl -sS --fail-with-body --max-time 2 "$@" || { local rc=$?; [ "$rc" = 28 ] || return "$rc"; }
    echo
    return 0
  fi
  command curl -sS --fail-with-body --max-time 20 "$@"
  echo
}
pnpm() {
  if [ "$1" != chatbridge ]; then echo "the docs test runs only pnpm chatbridge, not pnpm $1" >&2; return 127; fi
  shift
  local out rc=0
  out=$("$NODE" "$CLI" "$@") || rc=$?
  printf '%s\n' "$out"
  local t k
  t=$(printf '%s\n' "$out" | sed -n 's/^token: //p' | tail -1)
  k=$(printf '%s\n' "$out" | sed -n 's/^key: //p' | tail -1)
  if [ -n "$t" ]; then TOKEN=$t; fi
  if [ -n "$k" ]; then KEY=$k; fi
  return "$rc"
}
`;

function runExample(code: string): { status: number | null; output: string } {
  const filled = code.replaceAll('http://127.0.0.1:8080', url).replaceAll('postgres://…', database?.url ?? 'postgres://…');
  const result = spawnSync('bash', ['-c', `${PRELUDE}\n${filled}`], {
    cwd: scratch,
    env: {
      ...serverEnv(),
      NODE: process.execPath,
      CLI: join(SERVER_SRC, 'cli.ts'),
      CHATBRIDGE_PUBLIC_URL: url,
      TOKEN: printed.TOKEN,
      KEY: printed.KEY,
      ADMIN,
    },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const output = `${result.stdout}${result.stderr}`;
  printed.TOKEN = /^token: (\S+)$/m.exec(result.stdout)?.[1] ?? printed.TOKEN;
  printed.KEY = /^key: (\S+)$/m.exec(result.stdout)?.[1] ?? printed.KEY;
  return { status: result.status, output };
}

/** What the README's bot example names without creating it. */
async function arrange(): Promise<void> {
  const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const create = async (id: string) => {
    const response = await fetch(`${url}/admin/endpoints`, { method: 'POST', headers: admin, body: JSON.stringify({ id }) });
    expect(response.status).toBe(201);
    return ((await response.json()) as { token: string }).token;
  };
  const update = async (id: string, token: string, query: string) =>
    expect((await fetch(`${url}/update/${id}?token=${token}&${query}`, { method: 'POST' })).status).toBe(200);
  const one = await create('community-1');
  await update('community-1', one, 'channel_chat_b=22222&channel_chat_c=channel-c-1111');
  await create('community-2');
  const three = await create('community-3');
  await update('community-3', three, 'channel_chat_b=33333&channel_chat_c=channel-c-3333');
  for (let n = 1; n <= 7; n++)
    await update('community-3', three, `sender=chat_c&sender_channel=channel-c-3333&message_content=m${n}&trigger=true`);
}

const examples = allShellExamples(ROOT);

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'chatbridge-docs-examples-'));
  if (DATABASE_URL) database = await createScratchDatabase(DATABASE_URL);
  server = spawn(process.execPath, [join(SERVER_SRC, 'main.ts')], {
    cwd: scratch,
    env: { ...serverEnv(), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  ({ url } = await startedServer(server, 'the server'));
  await arrange();
}, 60_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((resolve) => server!.once('exit', resolve));
  }
  await database?.drop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the shell examples of README.md and docs/', () => {
  it('when the docs are read, then there are examples to run, and the extractor skips only blocks marked illustrative', () => {
    expect(examples.run.length).toBeGreaterThanOrEqual(6);
    const marked = shellExamples(
      '<!-- illustrative: needs a remote database -->\n```sh\ncurl http://db.internal/\n```\n\n```sh\ncurl http://x/\n```\n```sh\npnpm install\n```',
      'x.md',
    );
    expect(marked).toEqual({ run: [{ where: 'x.md:6', code: 'curl http://x/' }], illustrative: 1 });
  });

  for (const example of examples.run) {
    const needsPostgres = example.code.includes('postgres://…');
    it.skipIf(needsPostgres && !DATABASE_URL)(`when ${example.where} is run as written, then every command in it succeeds`, () => {
      const { status, output } = runExample(example.code);
      expect(status, `${example.where} failed:\n${example.code}\n--- output ---\n${output}`).toBe(0);
    });
  }
});
