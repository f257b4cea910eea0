// `pnpm deploy:bundle [folder]`: the deployable, in build/chatbridge or the folder given. It holds the
// compiled server and CLI (dist/, with the docs it serves), the server's production dependencies
// (node_modules/, installed by `pnpm deploy --prod`, the workspace's patches applied) and its
// package.json, and runs with plain `node dist/main.js` (the CLI: `node dist/cli.js`) from any
// folder: no pnpm, no source tree. docs/deploying.md builds a container image and a systemd service on it.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

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
  rmSync(out, { recursive: true, force: true });
  renameSync(staging, out);
} finally {
  rmSync(dirname(staging), { recursive: true, force: true });
}
console.log(`${out}: run it with  node ${join(out, 'dist', 'main.js')}`);
