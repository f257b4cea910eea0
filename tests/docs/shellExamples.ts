// The documentation's shell examples, as the docs test runs them: every fenced `sh` block of README.md
// and docs/*.md that talks to a server (a `curl` or `pnpm chatbridge` command outside comments), unless
// the line before its fence marks it illustrative:
//
//   <!-- illustrative: why it cannot run as written (a remote database, systemd, ...) -->
//   ```sh
//
// An illustrative block is one whose commands cannot run on a test machine as written; every other
// one is run, verbatim apart from its placeholders, against a real server.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ShellExample {
  /** `README.md:31`: the file and the line of the fence. */
  where: string;
  code: string;
}

export const ILLUSTRATIVE = /^<!--\s*illustrative\b.*-->\s*$/;
const TALKS_TO_A_SERVER = /(^|[\s;&|(])(curl|pnpm chatbridge)\s/;

/** The documentation files the examples come from, relative to `root`. */
export function documentationFiles(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => join('docs', f));
  return ['README.md', ...docs];
}

/** The blocks of one Markdown text that a test runs, and how many it left as illustrative. */
export function shellExamples(markdown: string, file: string): { run: ShellExample[]; illustrative: number } {
  const lines = markdown.split('\n');
  const run: ShellExample[] = [];
  let illustrative = 0;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```sh') continue;
    const fence = i;
    const body: string[] = [];
    while (++i < lines.length && lines[i]!.trim() !== '```') body.push(lines[i]!);
    const commands = body.filter((l) => !l.trim().startsWith('#'));
    if (!commands.some((l) => TALKS_TO_A_SERVER.test(l))) continue;
    if (ILLUSTRATIVE.test(lines[fence - 1]?.trim() ?? '')) illustrative++;
    else run.push({ where: `${file}:${fence + 1}`, code: body.join('\n') });
  }
  return { run, illustrative };
}

export function allShellExamples(root: string): { run: ShellExample[]; illustrative: number } {
  const all = { run: [] as ShellExample[], illustrative: 0 };
  for (const file of documentationFiles(root)) {
    const found = shellExamples(readFileSync(join(root, file), 'utf8'), file);
    all.run.push(...found.run);
    all.illustrative += found.illustrative;
  }
  return all;
}
