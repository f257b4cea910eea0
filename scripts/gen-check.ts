// Fails when the committed bundle or generated types differ from what the spec produces now.
// It regenerates into a scratch folder, so the working tree is never touched.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const scratch = mkdtempSync(join(tmpdir(), 'chatbridge-gen-'));
const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
try {
  const bundle = join(scratch, 'openapi.bundled.yaml');
  const types = join(scratch, 'schema.d.ts');
  run('redocly', ['bundle', 'openapi/openapi.yaml', '-o', bundle]);
  run('openapi-typescript', [bundle, '-c', 'packages/api/redocly.gen.yaml', '-o', types]);
  const stale = [
    ['packages/api/openapi.bundled.yaml', bundle],
    ['packages/api/src/schema.d.ts', types],
  ].filter(([committed, fresh]) => readFileSync(committed!, 'utf8') !== readFileSync(fresh!, 'utf8'));
  if (stale.length > 0) {
    console.error(`Stale generated files: ${stale.map(([c]) => c).join(', ')}. Run "pnpm gen" and commit.`);
    process.exit(1);
  }
  console.log('Generated files are up to date.');
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
