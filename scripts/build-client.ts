// The client package's build (`pnpm --filter @chatbridge/client build`, run by its prepack): ESM and
// declarations in packages/client/dist, with the generated API types inside it. The sources take their
// types from the workspace's @chatbridge/api; the published package carries a copy of them
// (dist/api.d.ts) and its declarations point there, so it installs alone: one tarball, no
// @chatbridge/api to publish or install beside it. The emitted JavaScript imports types only, which
// compile away, so only the declarations name the package.
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(import.meta.dirname, '..');
const CLIENT = join(ROOT, 'packages', 'client');
const dist = join(CLIENT, 'dist');
const API_TYPES = 'api.d.ts';

rmSync(dist, { recursive: true, force: true });
const tsc = fileURLToPath(import.meta.resolve('typescript/bin/tsc'));
execFileSync(process.execPath, [tsc, '-p', join(CLIENT, 'tsconfig.build.json')], { stdio: 'inherit' });
copyFileSync(join(ROOT, 'packages', 'api', 'src', 'schema.d.ts'), join(dist, API_TYPES));

const SPECIFIER = /(from\s+)(['"])@chatbridge\/api\2/g;
for (const file of readdirSync(dist).filter((f) => f.endsWith('.d.ts') && f !== API_TYPES)) {
  const path = join(dist, file);
  writeFileSync(path, readFileSync(path, 'utf8').replace(SPECIFIER, `$1$2./${API_TYPES.replace(/\.d\.ts$/, '.js')}$2`));
}
for (const file of readdirSync(dist)) {
  if (readFileSync(join(dist, file), 'utf8').includes('@chatbridge/api')) throw new Error(`dist/${file} still refers to @chatbridge/api`);
}
