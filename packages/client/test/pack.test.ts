// The client is a publishable package: `pnpm pack` must yield ESM, type declarations and the README,
// and nothing that depends on server code.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const PACKAGE_DIR = join(import.meta.dirname, '..');

describe('@chatbridge/client package', () => {
  it('when packed, then the tarball holds ESM, declarations, README and a manifest without server or workspace references', () => {
    const out = mkdtempSync(join(tmpdir(), 'chatbridge-pack-'));
    execFileSync('pnpm', ['pack', '--pack-destination', out], { cwd: PACKAGE_DIR, stdio: 'pipe' });
    const tarball = readdirSync(out).find((f) => f.endsWith('.tgz'))!;
    const files = execFileSync('tar', ['-tzf', join(out, tarball)], { encoding: 'utf8' }).trim().split('\n');
    expect(files).toEqual(expect.arrayContaining(['package/dist/index.js', 'package/dist/index.d.ts', 'package/README.md', 'package/package.json']));
    expect(files.filter((f) => f.startsWith('package/src/') || f.startsWith('package/test/'))).toEqual([]);

    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', join(out, tarball), 'package/package.json'], { encoding: 'utf8' }));
    expect(manifest.type).toBe('module');
    // The workspace-only "source" condition (tests resolve TypeScript sources) is not published.
    expect(manifest.exports).toEqual({ '.': { types: './dist/index.d.ts', default: './dist/index.js' } });
    expect(JSON.stringify(manifest.dependencies)).not.toMatch(/workspace:|@chatbridge\/server/);
    const index = execFileSync('tar', ['-xzOf', join(out, tarball), 'package/dist/index.js'], { encoding: 'utf8' });
    expect(index).toMatch(/^export /m);
  }, 60_000);
});
