// The server process: read the configuration, open the store, listen, and shut down cleanly. Loaded by
// main.ts once the Node version and the command line have been checked.
import { cliCommand } from './cliCommand.ts';
import { ConfigError, loadConfig } from './config.ts';
import { readEnvironment } from './envFile.ts';
import { createLogger } from './logger.ts';
import { ListenError } from './server.ts';
import { startService } from './service.ts';
import { describeStore, openStore } from './store/open.ts';
import { isUnavailable } from './store/unavailable.ts';
import { VERSION } from './version.ts';

const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  // Handlers first: a signal that arrives before the service is up (a fast restart) is kept and acted
  // on once it is, instead of killing the process with the default action.
  let requested: string | undefined;
  let onSignal: (signal: string) => void = (signal) => void (requested ??= signal);
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));

  const environment = readEnvironment(process.env, process.cwd());
  const config = loadConfig(environment.env);
  // Secrets leave the environment once read: child processes and crash dumps never see them.
  delete process.env.CHATBRIDGE_ADMIN_TOKEN; // only its digest is kept
  delete process.env.DATABASE_URL;
  const logger = createLogger(config.logLevel);
  if (config.trustProxy === true) {
    logger.warn(
      'CHATBRIDGE_TRUST_PROXY=true trusts every X-Forwarded-For entry, which clients can write themselves: ' +
        'they can then dodge the failed-authentication limit and get other addresses blocked. ' +
        'Set the number of proxies in front of the server, or their addresses, instead.',
    );
  }
  const store = await openStore(config.store, {
    serving: true,
    onBackgroundError: (err) => logger.warn({ err: { message: err.message } }, 'database connection dropped'),
    onWarning: (message) => logger.warn(message),
  });
  const running = await startService(
    {
      store,
      logger,
      adminTokenHash: config.adminTokenHash,
      allowPrivateWebhooks: config.allowPrivateWebhooks,
      validateResponses: config.validateResponses,
      messageTtlMs: config.messageTtlMs,
      corsOrigins: config.corsOrigins,
      trustProxy: config.trustProxy,
      connections: config.connections,
      managementPort: config.managementPort,
      rateLimits: config.rateLimits,
    },
    config.port,
    config.host,
  );

  // Only for the first-run hint below: the server is already serving, so a failed look is not a
  // failed start (the store answers every request with its own 503 until it is back).
  const endpoints = await store.endpoints.listIds(undefined, 1).then(
    (ids) => ids.length,
    () => undefined,
  );
  logger.info(
    {
      url: running.url,
      ...(running.managementUrl !== undefined && { managementUrl: running.managementUrl }),
      version: VERSION,
      ...(environment.file && { envFile: environment.file }),
      ...describeStore(config.store),
      adminApi: config.adminTokenHash ? 'enabled' : 'disabled',
    },
    `chatbridge ${VERSION} listening on ${running.url}`,
  );
  if (endpoints === 0) {
    logger.info(
      `No endpoints yet. Create one with "${cliCommand()} create my-community" (it prints the token once), ` +
        `then read it with: curl "${config.publicUrl ?? running.url}/my-community?token=<token>"`,
    );
  }
  if (!config.adminTokenHash) logger.info('Admin API disabled: set CHATBRIDGE_ADMIN_TOKEN (16+ characters) to enable it.');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    // Not unref'd: the deadline holds whatever else keeps the process alive.
    setTimeout(() => {
      logger.error('shutdown took too long; exiting');
      process.exit(1);
    }, config.drainMs + SHUTDOWN_GRACE_MS);
    // First the drain window: still serving, but /-/ready answers 503, so load balancers take the
    // instance out before it stops accepting connections.
    running.readiness.draining = true;
    if (config.drainMs > 0)
      logger.info({ signal, drainSeconds: config.drainMs / 1000 }, 'shutting down: not ready, still serving during the drain window');
    const drained = new Promise<void>((resolve) => setTimeout(resolve, config.drainMs));
    drained
      .then(() => {
        logger.info({ signal }, 'shutting down: draining in-flight requests and deliveries');
        return running.close();
      })
      .then(
        () => {
          logger.info('stopped');
          process.exit(0);
        },
        (err: unknown) => {
          logger.error({ err }, 'error while stopping');
          process.exit(1);
        },
      );
  };
  onSignal = stop;
  if (requested) stop(requested);
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) console.error(err.message);
  else if (err instanceof ListenError) console.error(`chatbridge failed to start: ${err.message}`);
  // An operator's matter (wrong host, database or credentials; the database down), not a bug: one
  // line naming it, without the driver's stack trace. Drivers' messages carry no password.
  else if (isUnavailable(err)) console.error(`chatbridge failed to start: the store cannot be opened: ${(err as Error).message}`);
  else console.error('chatbridge failed to start:', err);
  process.exit(1);
});
