import type { AppConfig } from '../config.ts';
import type { EndpointStore } from './port.ts';
import { PostgresEndpointStore } from './postgres.ts';
import { SqliteEndpointStore } from './sqlite.ts';

export interface OpenStoreHooks {
  /** Errors the store meets outside any call (PostgreSQL: an idle pooled connection dropped). */
  onBackgroundError?: (err: Error) => void;
  /** A database setting that will hurt in the long run (PostgreSQL: autovacuum off). */
  onWarning?: (message: string) => void;
}

/** Builds the store adapter the configuration names, its schema migrated to the current version. */
export async function openStore(config: AppConfig['store'], hooks: OpenStoreHooks = {}): Promise<EndpointStore> {
  switch (config.kind) {
    case 'sqlite':
      return new SqliteEndpointStore(config.sqlitePath);
    case 'postgres':
      return PostgresEndpointStore.open({
        connectionString: config.databaseUrl,
        poolSize: config.poolSize,
        ...(hooks.onBackgroundError && { onIdleError: hooks.onBackgroundError }),
        ...(hooks.onWarning && { onWarning: hooks.onWarning }),
      });
  }
}
