// `pnpm chatbridge ...`: provisioning directly on the configured store (same environment as the
// server). Tokens are printed once and never stored in plain text. Loaded by cli.ts once the Node
// version has been checked.
import { Command, InvalidArgumentError } from 'commander';
import { ENDPOINT_ID, createEndpoint, existingTokenProblem, listEndpointIds, rotateEndpointToken } from './admin/endpoints.ts';
import { addBotCommands } from './admin/botCommands.ts';
import { cliEnvironment, withStore } from './cliStore.ts';
import { ConfigError } from './config.ts';
import { errorLine } from './errorLine.ts';
import { reservedIdProblem } from './domain/reservedIds.ts';
import { addPortabilityCommands } from './portability/commands.ts';
import { VERSION } from './version.ts';

const endpointId = (value: string) => {
  if (!ENDPOINT_ID.test(value)) throw new InvalidArgumentError('an endpoint ID is 1 to 64 characters of A-Z a-z 0-9 _ -');
  return value;
};

const positiveInt = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError('must be an integer from 1 to 1000');
  return n;
};

function printIssued(issued: { id: string; token: string }, baseUrl: string, what: string): void {
  console.log(`${what} ${issued.id}`);
  console.log(`token: ${issued.token}`);
  console.log('This token is shown once; only its hash is stored. Keep it secret.');
  console.log(`Read the endpoint: curl "${baseUrl}/${issued.id}?token=${issued.token}"`);
}

const program = new Command('chatbridge')
  .description('Provision chatbridge endpoints on the configured store.')
  .version(VERSION, '-V, --version', 'print the version')
  .option('--debug', 'on an error, print its stack trace too (as CHATBRIDGE_DEBUG=1 does)')
  .configureOutput({ outputError: (text, write) => write(redactTokens(text)) });

/**
 * A token from standard input, alone on its one line (a trailing line break allowed): a secret never
 * goes on the command line (shell history, `ps`). Anything more (a token wrapped onto two lines,
 * blanks around it) is refused rather than cut, so what is stored is what the bots hold.
 */
async function tokenFromStdin(): Promise<string | undefined> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.length > 4096) return undefined;
  }
  const token = text.replace(/\r?\n$/, '');
  return /^\S+$/.test(token) ? token : undefined;
}

/** commander quotes the arguments it refuses: a token pasted onto the command line must not be echoed. */
const redactTokens = (text: string) => text.replace(/[A-Za-z0-9_-]{40,}/g, '[REDACTED]');

program
  .command('create')
  .description('create an endpoint and print its token')
  .argument('<id>', 'endpoint ID', endpointId)
  .option('--existing-token', "migrating from the original service: read the endpoint's existing token from standard input and keep it")
  .action((id: string, opts: { existingToken?: boolean }) =>
    withStore(async (store, { baseUrl }) => {
      const reserved = reservedIdProblem(id);
      if (reserved) {
        console.error(`The endpoint ID ${reserved}; nothing was created.`);
        return 1;
      }
      const existing = opts.existingToken ? await tokenFromStdin() : undefined;
      if (opts.existingToken && existing === undefined) {
        console.error('Standard input must hold the existing token alone, on one line; nothing was created.');
        return 1;
      }
      const problem = existing === undefined ? undefined : existingTokenProblem(existing);
      if (problem) {
        console.error(`The existing token ${problem}; nothing was created.`);
        return 1;
      }
      const issued = await createEndpoint(store, id, existing);
      if (!issued) {
        console.error(`An endpoint with ID ${id} already exists.`);
        return 1;
      }
      if (existing === undefined) printIssued(issued, baseUrl, 'created endpoint');
      else console.log(`created endpoint ${id} with its existing token (only its hash is stored)`);
      return 0;
    }),
  );

program
  .command('rotate')
  .description('issue a new token for an endpoint; the old one stops working at once')
  .argument('<id>', 'endpoint ID', endpointId)
  .action((id: string) =>
    withStore(async (store, { baseUrl }) => {
      const issued = await rotateEndpointToken(store, id);
      if (!issued) {
        console.error(`No endpoint has ID ${id}.`);
        return 1;
      }
      printIssued(issued, baseUrl, 'rotated the token of');
      return 0;
    }),
  );

program
  .command('delete')
  .description('delete an endpoint and its record')
  .argument('<id>', 'endpoint ID', endpointId)
  .action((id: string) =>
    withStore(async (store) => {
      if (!(await store.endpoints.delete(id))) {
        console.error(`No endpoint has ID ${id}.`);
        return 1;
      }
      console.log(`deleted endpoint ${id}`);
      return 0;
    }),
  );

program
  .command('list')
  .description('list endpoint IDs, a page at a time')
  .option('--limit <n>', 'page size (1-1000)', positiveInt, 100)
  .option('--cursor <id>', 'start after this ID', endpointId)
  .action((opts: { limit: number; cursor?: string }) =>
    withStore(async (store) => {
      const page = await listEndpointIds(store, opts.cursor, opts.limit);
      for (const id of page.ids) console.log(id);
      if (page.next_cursor) console.error(`more: --cursor ${page.next_cursor}`);
      return 0;
    }),
  );

program
  .command('show')
  .description("print an endpoint's record as JSON")
  .argument('<id>', 'endpoint ID', endpointId)
  .action((id: string) =>
    withStore(async (store) => {
      const found = await store.endpoints.get(id);
      if (!found) {
        console.error(`No endpoint has ID ${id}.`);
        return 1;
      }
      console.log(JSON.stringify(found.record, null, 2));
      return 0;
    }),
  );

addPortabilityCommands(program);
addBotCommands(program);

/** CHATBRIDGE_DEBUG as every other setting is read; the process's own when chatbridge.env cannot be read. */
function debugSetting(): string | undefined {
  try {
    return cliEnvironment().CHATBRIDGE_DEBUG;
  } catch {
    return process.env.CHATBRIDGE_DEBUG;
  }
}

// An error is one line naming it (an operator's matter: a wrong setting, the database down); its
// stack trace only when asked for, for a bug report.
program.parseAsync().catch((err: unknown) => {
  const debug = program.opts<{ debug?: boolean }>().debug === true || /^(1|true)$/i.test(debugSetting() ?? '');
  console.error(err instanceof ConfigError ? err.message : `chatbridge: ${errorLine(err)}`);
  if (debug && !(err instanceof ConfigError)) console.error(err);
  else if (!(err instanceof ConfigError)) console.error('(run with --debug, or CHATBRIDGE_DEBUG=1, for the stack trace)');
  process.exit(1);
});
