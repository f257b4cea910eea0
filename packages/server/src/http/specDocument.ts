// The bundled spec as parsed YAML, for the checks that read it while an app is built (request
// hygiene, query names): parsed once per file and process, since building one app reads it four
// times and a parse of the 150 KB document takes tens of milliseconds. Shared: readers never change it.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';

const parsed = new Map<string, unknown>();

export function specDocument(specPath: string): unknown {
  if (!parsed.has(specPath)) parsed.set(specPath, parseYaml(readFileSync(specPath, 'utf8')));
  return parsed.get(specPath);
}
