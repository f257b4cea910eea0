// `pnpm build` (and `pnpm install`, through the root postinstall script): compiles the server to
// JavaScript in packages/server/dist (or the folder given as the one argument), with the stores'
// migrations (.sql files) it reads at run time and the HTML docs it serves at /-/docs (dist/docs/index.html).
//
// Node could run the TypeScript sources directly, but its type stripping loads a WebAssembly compiler
// into the process and keeps its memory (16 MB of resident memory at start-up, measured). Types are
// not checked here (`noCheck`; `pnpm typecheck` does that), so the compile takes about a second.
//
// Two builds may run at once (two installs, or a build beside an install): each writes a folder of its
// own next to the target, complete before anything is replaced, then renames it into place. The
// target is therefore always either the previous complete build or a new complete one, never a mix.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(import.meta.dirname, '..');
const SERVER = join(ROOT, 'packages', 'server');
/** The stores' migration folders, read at run time (store/migrations.ts). */
const MIGRATIONS = [join('store', 'sqlite', 'migrations'), join('store', 'postgres', 'migrations')];
const out = resolve(process.argv[2] ?? join(SERVER, 'dist'));

let tsc: string;
try {
  tsc = fileURLToPath(import.meta.resolve('typescript/bin/tsc'));
} catch {
  // An install without dev dependencies (`pnpm install --prod`) has no compiler: say so, do not fail it.
  console.warn('chatbridge build skipped: TypeScript is not installed (install the dev dependencies, then run pnpm build).');
  process.exit(0);
}

// Beside the target, so that the build resolves the server's dependencies as the target does.
const staging = mkdtempSync(join(dirname(out), `.${basename(out)}-new-`));
try {
  execFileSync(process.execPath, [tsc, '-p', join(SERVER, 'tsconfig.build.json'), '--outDir', staging], { stdio: 'inherit' });
  for (const folder of MIGRATIONS) cpSync(join(SERVER, 'src', folder), join(staging, folder), { recursive: true });
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-docs.ts'), join(staging, 'docs', 'index.html')], { stdio: 'inherit' });
  chmodSync(staging, 0o755); // mkdtemp makes it 0700: the build must be readable by the user a service runs as
  replaceWith(staging, out);
} finally {
  rmSync(staging, { recursive: true, force: true }); // nothing left behind when a step failed
}

/**
 * Puts the complete build `from` at `to`. A directory cannot be renamed over a non-empty one, so the
 * previous build is first moved aside; if another build's folder lands in between, that one is moved
 * aside in turn and this one put in place (the last build to finish wins, whole).
 */
function replaceWith(from: string, to: string): void {
  for (;;) {
    const aside = `${from}-old`;
    try {
      renameSync(to, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    try {
      renameSync(from, to);
      return;
    } catch (err) {
      if (!['ENOTEMPTY', 'EEXIST'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
    } finally {
      rmSync(aside, { recursive: true, force: true });
    }
  }
}
