// The one way a CLI command reaches the store: the configuration read as the server reads it (the
// process's environment over chatbridge.env, envFile.ts, parsed by loadConfig), and the store it
// names, opened for the command and closed after it. Every command (cliProgram.ts, admin/botCommands.ts,
// portability/commands.ts) goes through withStore, so none can read a setting the others do not.
import { type AppConfig, loadConfig } from './config.ts';
import { readEnvironment } from './envFile.ts';
import { displayUrl } from './http/transport/displayUrl.ts';
import { openStore } from './store/open.ts';
import type { EndpointStore } from './store/port.ts';

export interface CliSettings {
  config: AppConfig;
  /** Where clients reach the server, for the curl lines a command prints. */
  baseUrl: string;
}

/** The environment the CLI's configuration is read from (the working folder's chatbridge.env under it). */
export const cliEnvironment = (): NodeJS.ProcessEnv => readEnvironment(process.env, process.cwd()).env;

/** Runs `work` on the configured store and sets the process's exit code to what it returns. */
export async function withStore(work: (store: EndpointStore, settings: CliSettings) => Promise<number>): Promise<void> {
  const config = loadConfig(cliEnvironment());
  const store = await openStore(config.store);
  try {
    process.exitCode = await work(store, { config, baseUrl: config.publicUrl ?? displayUrl(config.host, config.port) });
  } finally {
    await store.close();
  }
}
