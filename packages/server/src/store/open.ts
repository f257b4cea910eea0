import type { AppConfig } from '../config.ts';
import type { EndpointStore } from './port.ts';
import { SqliteEndpointStore } from './sqlite.ts';

/** Builds the store adapter the configuration names. */
export async function openStore(config: AppConfig['store']): Promise<EndpointStore> {
  switch (config.kind) {
    case 'sqlite':
      return new SqliteEndpointStore(config.sqlitePath);
  }
}
