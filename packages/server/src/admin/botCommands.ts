// `pnpm chatbridge bot create|rotate|delete <id> [--platform chat_b]` and `pnpm chatbridge bot list`:
// bot keys provisioned directly on the configured store. A key is printed once and never stored in
// plain text. A server beside the CLI notices a change within BOT_KEYS_MAX_AGE_MS (bots/keyCache.ts).
import { type Command, InvalidArgumentError, Option } from 'commander';
import { BOT_KEYS_MAX_AGE_MS } from '../bots/keyCache.ts';
import { PLATFORMS, type Platform } from '../domain/record.ts';
import { withStore } from '../cliStore.ts';
import { BOT_ID, type IssuedBotKey, MAX_BOTS, createBot, listBots, rotateBotKey } from './bots.ts';

const botId = (value: string) => {
  if (!BOT_ID.test(value)) throw new InvalidArgumentError('a bot ID is 1 to 64 characters of A-Z a-z 0-9 _ -');
  return value;
};

function printIssued(issued: IssuedBotKey, baseUrl: string, what: string): void {
  console.log(`${what} ${issued.id} (acts for ${issued.platform} on every endpoint)`);
  console.log(`key: ${issued.key}`);
  console.log('This key is shown once; only its hash is stored. Keep it secret.');
  console.log(`Read an endpoint: curl -H "Authorization: Bearer ${issued.key}" "${baseUrl}/<endpoint>"`);
}

export function addBotCommands(program: Command): void {
  const bot = program.command('bot').description('bot keys: one key per bot, acting for its platform on every endpoint');

  bot
    .command('create')
    .description('create a bot and print its key')
    .argument('<id>', 'bot ID', botId)
    .addOption(new Option('--platform <platform>', 'the platform the key acts for').choices(PLATFORMS).makeOptionMandatory())
    .action((id: string, opts: { platform: Platform }) =>
      withStore(async (store, { baseUrl }) => {
        const outcome = await createBot(store, id, opts.platform);
        if (outcome.kind === 'taken') {
          console.error(`A bot with ID ${id} already exists.`);
          return 1;
        }
        if (outcome.kind === 'full') {
          console.error(`The service has its ${MAX_BOTS} bots; delete one first.`);
          return 1;
        }
        printIssued(outcome.issued, baseUrl, 'created bot');
        return 0;
      }),
    );

  bot
    .command('rotate')
    .description(`issue a new key for a bot; the old one stops working within ${BOT_KEYS_MAX_AGE_MS / 1000} s on running servers`)
    .argument('<id>', 'bot ID', botId)
    .action((id: string) =>
      withStore(async (store, { baseUrl }) => {
        const issued = await rotateBotKey(store, id);
        if (!issued) {
          console.error(`No bot has ID ${id}.`);
          return 1;
        }
        printIssued(issued, baseUrl, 'rotated the key of bot');
        return 0;
      }),
    );

  bot
    .command('delete')
    .description(`delete a bot; its key stops working within ${BOT_KEYS_MAX_AGE_MS / 1000} s on running servers`)
    .argument('<id>', 'bot ID', botId)
    .action((id: string) =>
      withStore(async (store) => {
        if (!(await store.bots.delete(id))) {
          console.error(`No bot has ID ${id}.`);
          return 1;
        }
        console.log(`deleted bot ${id}`);
        return 0;
      }),
    );

  bot
    .command('list')
    .description('list bots and their platforms (never their keys)')
    .action(() =>
      withStore(async (store) => {
        for (const b of (await listBots(store)).bots) console.log(`${b.id}\t${b.platform}`);
        return 0;
      }),
    );
}
