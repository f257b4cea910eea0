// The client is a publishable package: `pnpm pack` must yield ESM, type declarations and the README,
// and nothing that depends on server code.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const PACKAGE_DIR = join(import.meta.dirname, '..');

describe('@chatbridge/client package', () => {
  it('when packed, then the tarball holds ESM, declarations, README and a manifest without server or workspace references', () => {
    const out = mkdtempSync(join(tmpdir(), 'chatbridge-pack-'));
    execFileSync('pnpm', ['pack', '--pack-destination', out], { cwd: PACKAGE_DIR, stdio: 'pipe' });
    const tarball = readdirSync(out).find((f) => f.endsWith('.tgz'))!;
    const files = execFileSync('tar', ['-tzf', join(out, tarball)], { encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(files).toEqual(
      expect.arrayContaining(['package/dist/index.js', 'package/dist/index.d.ts', 'package/README.md', 'package/package.json']),
    );
    expect(files.filter((f) => f.startsWith('package/src/') || f.startsWith('package/test/'))).toEqual([]);

    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', join(out, tarball), 'package/package.json'], { encoding: 'utf8' }));
    expect(manifest.type).toBe('module');
    // The workspace-only "source" condition (tests resolve TypeScript sources) is not published.
    expect(manifest.exports).toEqual({ '.': { types: './dist/index.d.ts', default: './dist/index.js' } });
    expect(JSON.stringify(manifest.dependencies)).not.toMatch(/workspace:|@chatbridge\/server/);
    const index = execFileSync('tar', ['-xzOf', join(out, tarball), 'package/dist/index.js'], { encoding: 'utf8' });
    expect(index).toMatch(/^export /m);
  }, 60_000);

  it('when the tarball is installed alone into a new project, then code using the client typechecks there', () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-consumer-'));
    try {
      execFileSync('pnpm', ['--filter', '@chatbridge/client', 'pack', '--pack-destination', dir], { cwd: PACKAGE_DIR, stdio: 'pipe' });
      const tarball = join(dir, readdirSync(dir).find((f) => f.endsWith('.tgz'))!);
      const app = join(dir, 'app');
      mkdirSync(app);
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
      writeFileSync(
        join(app, 'use.ts'),
        [
          "import { createChatbridgeClient, type EndpointRecord, type paths } from '@chatbridge/client';",
          "const client = createChatbridgeClient({ baseUrl: 'http://127.0.0.1:8080' });",
          'export const read = (id: string, token: string): Promise<EndpointRecord> => client.getEndpoint(id, token);',
          "export type LivePath = paths['/-/live'];",
          '',
        ].join('\n'),
      );
      // One install command, the registry's packages only: the client's own dependencies come with it.
      execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', tarball, 'typescript@5.9.3'], {
        cwd: app,
        stdio: 'pipe',
      });
      const tsc = join(app, 'node_modules', 'typescript', 'bin', 'tsc');
      const args = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', 'use.ts'];
      const result = (() => {
        try {
          return execFileSync(process.execPath, [tsc, ...args], { cwd: app, encoding: 'utf8' });
        } catch (err) {
          return (err as { stdout: string }).stdout;
        }
      })();
      expect(result).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
