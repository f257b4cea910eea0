// The server loads its spec from @chatbridge/api's bundledSpecPath; operators check the project out
// wherever they like, so the path must hold for directories with spaces and non-ASCII characters.
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const API = join(import.meta.dirname, '..', '..', 'api');

describe('bundledSpecPath', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'chatbridge-')), 'my checkout é');
  afterAll(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

  it('when the package lies under a path with a space and an accented letter, then it names the spec file there', async () => {
    mkdirSync(join(dir, 'src'), { recursive: true });
    cpSync(join(API, 'src', 'index.js'), join(dir, 'src', 'index.js'));
    cpSync(join(API, 'openapi.bundled.yaml'), join(dir, 'openapi.bundled.yaml'));
    cpSync(join(API, 'package.json'), join(dir, 'package.json'));
    const { bundledSpecPath } = (await import(pathToFileURL(join(dir, 'src', 'index.js')).href)) as { bundledSpecPath: string };
    expect(bundledSpecPath).toBe(join(dir, 'openapi.bundled.yaml'));
    expect(existsSync(bundledSpecPath)).toBe(true);
  });
});
