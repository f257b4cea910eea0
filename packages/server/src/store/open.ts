import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type AppConfig, ConfigError, DEFAULT_SQLITE_PATH } from '../config.ts';
import type { EndpointStore } from './port.ts';
import { PostgresEndpointStore } from './postgres/store.ts';
import { SqliteEndpointStore } from './sqlite/store.ts';

export interface OpenStoreOptions {
  /**
   * SQLite: a store that serves requests waits for another process's write lock on timers, never by
   * blocking its event loop for more than this (see SqliteStoreOptions.busyTimeoutMs). Unset: the
   * CLI's patient default.
   */
  serving?: boolean;
  /** Errors the store meets outside any call (PostgreSQL: an idle pooled connection dropped). */
  onBackgroundError?: (err: Error) => void;
  /** A database setting that will hurt in the long run (PostgreSQL: autovacuum off). */
  onWarning?: (message: string) => void;
}

/** A serving store's longest block of its event loop on another process's SQLite lock. */
export const SERVING_BUSY_TIMEOUT_MS = 20;

/** Builds the store adapter the configuration names, its schema migrated to the current version. */
export async function openStore(config: AppConfig['store'], options: OpenStoreOptions = {}): Promise<EndpointStore> {
  switch (config.kind) {
    case 'sqlite':
      sqliteFolder(config.sqlitePath);
      return new SqliteEndpointStore(config.sqlitePath, options.serving ? { busyTimeoutMs: SERVING_BUSY_TIMEOUT_MS } : {});
    case 'postgres':
      return PostgresEndpointStore.open({
        connectionString: config.databaseUrl,
        poolSize: config.poolSize,
        ...(options.onBackgroundError && { onIdleError: options.onBackgroundError }),
        ...(options.onWarning && { onWarning: options.onWarning }),
      });
  }
}

/**
 * The SQLite file's folder must exist: a mistyped CHATBRIDGE_SQLITE_PATH is refused, naming it, rather
 * than a store started empty in folders made up from the typo. Only the default's folder (./data) is
 * created, so that a fresh checkout starts with no setting at all.
 */
function sqliteFolder(path: string): void {
  if (path === ':memory:') return;
  const folder = dirname(resolve(path));
  if (existsSync(folder)) return;
  if (path === DEFAULT_SQLITE_PATH) return void mkdirSync(folder, { recursive: true });
  throw new ConfigError(
    `CHATBRIDGE_SQLITE_PATH=${path}: the folder ${folder} does not exist. Create it (the store creates its file, not folders), or correct the path.`,
  );
}

/**
 * What the start-up log says about the store: its kind and where it lives. For PostgreSQL the host,
 * port and database name only: the user name and password in the URL are never shown.
 */
export function describeStore(config: AppConfig['store']): { store: string; sqlitePath?: string; database?: string } {
  if (config.kind === 'sqlite') return { store: 'sqlite', sqlitePath: config.sqlitePath };
  const url = new URL(config.databaseUrl);
  // The driver's defaults for what the URL leaves out (it also reads PGHOST, PGPORT and PGDATABASE).
  const host = url.hostname || 'localhost';
  const port = url.port || '5432';
  const name = decodeURIComponent(url.pathname.replace(/^\//, '')) || '(the user name)';
  return { store: 'postgres', database: `${host}:${port}/${name}` };
}
