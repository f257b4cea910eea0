// `pnpm build` (and the first step of `pnpm start`): compiles the server to JavaScript, in
// packages/server/dist or the folder given as the one argument. Node can run the TypeScript sources
// directly, but its type stripping loads a WebAssembly compiler into the process and keeps its
// memory: 16 MB of the server's resident memory (148 against 132 MB at start-up, measured), which
// the 100,000-endpoint benchmark's 200 MB bound has no room for. Types are not checked here
// (`noCheck`; `pnpm typecheck` does that), so the build takes about a second and emits what type
// stripping would run. The PostgreSQL migrations (.sql) are read at run time next to the compiled
// adapter, so they are copied along.
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER = 'packages/server';
const MIGRATIONS = 'store/migrations';
const out = resolve(process.argv[2] ?? join(SERVER, 'dist'));

rmSync(out, { recursive: true, force: true }); // nothing stale from a removed source
const tsc = fileURLToPath(import.meta.resolve('typescript/bin/tsc'));
execFileSync(process.execPath, [tsc, '-p', join(SERVER, 'tsconfig.build.json'), '--outDir', out], { stdio: 'inherit' });
cpSync(join(SERVER, 'src', MIGRATIONS), join(out, MIGRATIONS), { recursive: true });
