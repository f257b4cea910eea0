// `pnpm deploy:bundle [folder]`: the deployable, in build/chatbridge or the folder given. It holds the
// compiled server and CLI (dist/, with the docs it serves), the server's production dependencies
// (node_modules/, installed by `pnpm deploy --prod`, the workspace's patches applied) and its
// package.json, and runs with plain `node dist/main.js` (the CLI: `node dist/cli.js`) from any
// folder: no pnpm, no source tree. docs/deploying.md builds a container image and a systemd service on it.
// Every file in it is readable by any user (folders 0755, files 0644, executables 0755), so that it
// runs as the service's own user whoever built and copied it.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { basename, delimiter, dirname, join, resolve } from 'node:path';
import { nodeVersionProblem } from '../packages/server/src/nodeVersion.ts';

const ROOT = join(import.meta.dirname, '..');
const out = resolve(process.argv[2] ?? join(ROOT, 'build', 'chatbridge'));

mkdirSync(dirname(out), { recursive: true });
// pnpm deploy wants a folder that does not exist yet; it is made here, complete, then renamed into place.
const staging = join(mkdtempSync(join(dirname(out), `.${basename(out)}-new-`)), 'bundle');
try {
  execFileSync('pnpm', ['--filter', '@chatbridge/server', 'deploy', '--prod', staging], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  // A build of the current sources of its own, in place of whatever dist/ the checkout held (pnpm deploy
  // copies that one): the checkout's build, which a running `pnpm start` may be loading, is never touched.
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-server.ts'), join(staging, 'dist')], { cwd: ROOT, stdio: 'inherit' });
  if (!existsSync(join(staging, 'dist', 'main.js')) || !existsSync(join(staging, 'dist', 'docs', 'index.html'))) {
    throw new Error('pnpm deploy did not copy the build (dist/ with its docs)');
  }
  copyFileSync(join(ROOT, 'LICENSE'), join(staging, 'LICENSE'));
  readableByAll(staging);
  rmSync(out, { recursive: true, force: true });
  renameSync(staging, out);
} finally {
  rmSync(dirname(staging), { recursive: true, force: true });
}

/** Folders 0755, files 0644 (0755 when their owner may run them); symbolic links are left as they are. */
function readableByAll(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  if (stat.isDirectory()) {
    chmodSync(path, 0o755);
    for (const entry of readdirSync(path)) readableByAll(join(path, entry));
  } else chmodSync(path, stat.mode & 0o100 ? 0o755 : 0o644);
}

// The `node` an operator's shell finds (PATH without pnpm's node_modules/.bin, where the pinned Node
// is): when it is too old, say so here, not at the first start on the target.
const range = (JSON.parse(readFileSync(join(out, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
const path = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((p) => !p.includes(join('node_modules', '.bin')))
  .join(delimiter);
let shellNode: string | undefined;
try {
  shellNode = execFileSync('node', ['--version'], { env: { ...process.env, PATH: path }, encoding: 'utf8' }).trim();
} catch {
  shellNode = undefined;
}
console.log(
  `${out}: run it with Node.js ${range.replace(/^>=\s*/, '')} or later (engines.node ${range}): node ${join(out, 'dist', 'main.js')}`,
);
if (shellNode === undefined) console.log('No node is on this PATH outside the checkout: install Node.js where the folder will run.');
else if (nodeVersionProblem(shellNode, range))
  console.log(`The node on this PATH is ${shellNode}, too old to run it: install a newer Node.js where the folder will run.`);
