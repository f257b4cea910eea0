// The first step of `pnpm start`: the compiled server must be there (`pnpm install` and `pnpm build`
// make it). Without it, one line says what to run, instead of Node's module-not-found stack trace.
// A build older than the sources still starts, with a warning: what runs is the build.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const SERVER = join(import.meta.dirname, '..', 'packages', 'server');
const main = join(SERVER, 'dist', 'main.js');

if (!existsSync(main)) {
  console.error('chatbridge is not built: run pnpm build (pnpm install builds it too), then pnpm start.');
  process.exit(1);
}
const builtAt = statSync(main).mtimeMs;
const newer = readdirSync(join(SERVER, 'src'), { recursive: true, encoding: 'utf8' }).find(
  (f) => statSync(join(SERVER, 'src', f)).mtimeMs > builtAt,
);
if (newer) console.warn(`chatbridge: packages/server/src/${newer} is newer than the build; run pnpm build to start the current sources.`);
