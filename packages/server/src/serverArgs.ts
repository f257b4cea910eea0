// The server's command line: it takes no arguments (it is configured by its environment), and
// answers --help and --version. Anything else is refused with one line and exit code 2 before any
// server starts: a flag the server does not know must never be mistaken for one it obeys.
import { Command, CommanderError } from 'commander';
import { VERSION } from './version.ts';

export type ServerCommandLine = { kind: 'serve' } | { kind: 'exit'; code: 0 | 2; stdout: string; stderr: string };

/** Exit code of a command line the server refuses (as a shell's usage error). */
export const EXIT_USAGE = 2;

const DESCRIPTION =
  'Runs the chatbridge server. It takes no other arguments: the environment configures it (PORT, HOST, ' +
  'CHATBRIDGE_STORE, DATABASE_URL, ...: the README lists every variable), read over an optional ' +
  'chatbridge.env file in the working folder (or the file CHATBRIDGE_ENV_FILE names). ' +
  'Endpoints and bot keys are provisioned with the CLI: cli.js beside this file (pnpm chatbridge in a checkout).';

/** What the command line `args` (process.argv after the script) asks for. */
export function serverCommandLine(args: readonly string[]): ServerCommandLine {
  let stdout = '';
  let stderr = '';
  const program = new Command('main.js')
    .description(`chatbridge ${VERSION}\n\n${DESCRIPTION}`)
    .version(VERSION, '-V, --version', 'print the version and exit')
    .helpOption('-h, --help', 'print this help and exit')
    .allowExcessArguments(false)
    .configureHelp({ helpWidth: 100 })
    .exitOverride()
    .configureOutput({
      writeOut: (text) => void (stdout += text),
      writeErr: (text) => void (stderr += text),
      // One line: what was wrong and where to look, without commander's usage block.
      outputError: (text, write) => write(`chatbridge: ${text.replace(/^error: /, '').trim()} (see --help)\n`),
    })
    .action(() => undefined);
  try {
    program.parse(args, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    const ok = error.code === 'commander.helpDisplayed' || error.code === 'commander.version';
    return { kind: 'exit', code: ok ? 0 : EXIT_USAGE, stdout, stderr };
  }
  return { kind: 'serve' };
}
