// Builds the published HTML docs as one self-contained file: docs/index.html, or the file given as
// the one argument (`pnpm build` puts a copy next to the compiled server, which serves it at
// /-/docs). Redocly inlines the Redoc bundle (--inlineBundle); Redoc still points its sidebar logo and
// icon set at Redocly's CDN, so those URLs are blanked to make the page load nothing from the network.
// Its telemetry (traces posted to Redocly a few seconds after the page opens) is off by redocly.yaml's
// `telemetry: off`, checked here.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(import.meta.dirname, '..');
const out = resolve(process.argv[2] ?? join(ROOT, 'docs', 'index.html'));
// Redocly's CLI from its package (no PATH lookup), run under this Node.
const redocly = join(dirname(fileURLToPath(import.meta.resolve('@redocly/cli/package.json'))), 'bin', 'cli.js');
// A file of this run's own until it is complete: two builds at once never read each other's half.
const draft = `${out}.${process.pid}.tmp`;
mkdirSync(dirname(out), { recursive: true });
execFileSync(
  process.execPath,
  [redocly, 'build-docs', join(ROOT, 'packages', 'api', 'openapi.bundled.yaml'), '-o', draft, '--inlineBundle'],
  {
    cwd: ROOT, // redocly.yaml
    stdio: ['ignore', 'ignore', 'inherit'],
  },
);
const html = readFileSync(draft, 'utf8');
const REDOCLY_CDN = /https:\/\/cdn\.redoc(?:\.ly|ly\.com)\/[^`"'\s)]*/g;
const offline = html.replace(REDOCLY_CDN, 'data:,');
if (REDOCLY_CDN.test(offline)) throw new Error("the docs still reference Redocly's CDN");
if (!/__redoc_options = \{[^;]*"disableTelemetry":true/.test(offline)) throw new Error("the docs page would send Redoc's telemetry");
writeFileSync(draft, offline);
renameSync(draft, out);
console.log(`${out}: self-contained, ${(offline.length / 1024).toFixed(0)} KiB`);
