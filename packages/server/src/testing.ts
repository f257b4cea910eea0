// Test support: a real server on port 0 over a scratch SQLite file, with helpers to provision.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEndpoint } from './admin/endpoints.ts';
import { createLogger, type Logger } from './logger.ts';
import { type RunningServer, startServer } from './server.ts';
import type { EndpointStore } from './store/port.ts';
import type { Readiness } from './http/deps.ts';
import { SqliteEndpointStore } from './store/sqlite.ts';
import { hashToken } from './tokens.ts';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export interface TestServer extends RunningServer {
  store: EndpointStore;
  readiness: Readiness;
  adminToken: string;
  /** Creates an endpoint directly in the store and returns its token. */
  provision(id: string): Promise<string>;
}

export interface TestServerOptions {
  allowHttpWebhooks?: boolean;
  logger?: Logger;
  adminToken?: string | null;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'chatbridge-test-'));
  const store = new SqliteEndpointStore(join(dir, 'store.sqlite'));
  const adminToken = options.adminToken === undefined ? TEST_ADMIN_TOKEN : options.adminToken;
  const readiness: Readiness = { draining: false };
  const running = await startServer(
    {
      store,
      logger: options.logger ?? createLogger('silent'),
      adminTokenHash: adminToken === null ? undefined : hashToken(adminToken),
      allowHttpWebhooks: options.allowHttpWebhooks ?? false,
      validateResponses: true,
      readiness,
    },
    0,
    '127.0.0.1',
  );
  return {
    ...running,
    store,
    readiness,
    adminToken: adminToken ?? '',
    async provision(id) {
      const issued = await createEndpoint(store, id);
      if (!issued) throw new Error(`endpoint ${id} exists`);
      return issued.token;
    },
    async close() {
      await running.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
