// Builds the published HTML docs as one self-contained file. Redocly inlines the Redoc bundle
// (--inlineBundle); Redoc still points its sidebar logo and icon set at Redocly's CDN, so those URLs
// are blanked to make the page load nothing from the network. Its telemetry (traces posted to
// Redocly a few seconds after the page opens) is off by redocly.yaml's `telemetry: off`, checked here.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const OUT = 'docs/index.html';
execFileSync('redocly', ['build-docs', 'packages/api/openapi.bundled.yaml', '-o', OUT, '--inlineBundle'], { stdio: 'inherit' });
const html = readFileSync(OUT, 'utf8');
const REDOCLY_CDN = /https:\/\/cdn\.redoc(?:\.ly|ly\.com)\/[^`"'\s)]*/g;
const offline = html.replace(REDOCLY_CDN, 'data:,');
if (REDOCLY_CDN.test(offline)) throw new Error("the docs still reference Redocly's CDN");
if (!/__redoc_options = \{[^;]*"disableTelemetry":true/.test(offline)) throw new Error("the docs page would send Redoc's telemetry");
writeFileSync(OUT, offline);
console.log(`${OUT}: self-contained, ${(offline.length / 1024).toFixed(0)} KiB`);
