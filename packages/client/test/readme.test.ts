// The client's README is code its readers copy: every ```ts block of packages/client/README.md must
// compile against the client as it is (a renamed method, a changed option or a wrong type in the
// README fails here). Each block is its own module; the names the prose leaves to the reader (`id`,
// `token`, a `relay` function, the `chatbridge` client of "Create a client", ...) are declared for it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const CLIENT = join(import.meta.dirname, '..');
const README = readFileSync(join(CLIENT, 'README.md'), 'utf8');

/** What the README's blocks use without defining it, each declared unless the block defines it itself. */
const GIVEN: Record<string, string> = {
  chatbridge: 'declare const chatbridge: import("@chatbridge/client").ChatbridgeClient;',
  admin: 'declare const admin: import("@chatbridge/client").ChatbridgeClient;',
  bot: 'declare const bot: import("@chatbridge/client").ChatbridgeBotClient;',
  messageNumberOf: 'import { messageNumberOf } from "@chatbridge/client";',
  createChatbridgeClient: 'import { createChatbridgeClient } from "@chatbridge/client";',
  id: 'declare const id: string;',
  token: 'declare const token: string;',
  existingToken: 'declare const existingToken: string;',
  relay: 'declare function relay(message: import("@chatbridge/client").Message): Promise<void>;',
  saveLastEventId: 'declare function saveLastEventId(id: number): void;',
  loadLastPosition: 'declare function loadLastPosition(): number | undefined;',
  saveLastPosition: 'declare function saveLastPosition(position: number): void;',
};

/** The ```ts blocks, with the line each starts on. */
function tsBlocks(markdown: string): { line: number; code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```ts') continue;
    const start = i + 1;
    while (++i < lines.length && lines[i]!.trim() !== '```');
    blocks.push({ line: start + 1, code: lines.slice(start, i).join('\n') });
  }
  return blocks;
}

const defines = (code: string, name: string) =>
  new RegExp(`(const|let|function)\\s+(\\{[^}]*\\b)?${name}\\b|import\\s*\\{[^}]*\\b${name}\\b`).test(code);

const scratch = mkdtempSync(join(CLIENT, '.readme-check-')); // inside the package: `@chatbridge/client` resolves to itself
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('packages/client/README.md', () => {
  it('when every ts block is compiled against the client, then none has a type error', () => {
    const blocks = tsBlocks(README);
    expect(blocks.length).toBeGreaterThan(10);
    const files = blocks.map(({ line, code }) => {
      const given = Object.entries(GIVEN)
        .filter(([name]) => new RegExp(`\\b${name}\\b`).test(code) && !defines(code, name))
        .map(([, declaration]) => declaration);
      const file = join(scratch, `block-line-${line}.ts`);
      writeFileSync(file, `${given.join('\n')}\nexport {};\n${code}\n`);
      return file;
    });
    const config = ts.getParsedCommandLineOfConfigFile(
      join(CLIENT, 'tsconfig.json'),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
    );
    const program = ts.createProgram(files, { ...config!.options, noEmit: true, rootDir: undefined, types: ['node'] });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && files.includes(d.file.fileName))
      .map((d) => `${d.file!.fileName.split('/').pop()}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
    expect(problems).toEqual([]);
  });
});
