// Test support: the real service on port 0 over a scratch SQLite file, with helpers to provision.
import type { QueueLimits } from './domain/messageQueue.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEndpoint } from './admin/endpoints.ts';
import { createLogger, type Logger } from './logger.ts';
import { type RunningService, type ServiceOptions, startService } from './service.ts';
import type { EndpointStore } from './store/port.ts';
import { SqliteEndpointStore } from './store/sqlite/store.ts';
import { hashToken } from './tokens.ts';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export interface TestServer extends RunningService {
  store: EndpointStore;
  adminToken: string;
  /** Creates an endpoint directly in the store and returns its token. */
  provision(id: string): Promise<string>;
}

export interface TestServerOptions {
  allowPrivateWebhooks?: boolean;
  logger?: Logger;
  adminToken?: string | null;
  /** Defaults to a scratch SQLite file. */
  store?: EndpointStore;
  messageTtlMs?: number;
  messageQueueLimits?: QueueLimits;
  clock?: () => number;
  relay?: ServiceOptions['relay'];
  events?: ServiceOptions['events'];
  rateLimits?: ServiceOptions['rateLimits'];
  corsOrigins?: string[];
  connections?: ServiceOptions['connections'];
  managementPort?: number;
  trustProxy?: ServiceOptions['trustProxy'];
  /** Validate responses against the spec (default true); false runs production's direct reply path. */
  validateResponses?: boolean;
  /** The docs page `/-/docs` serves; default: a small stand-in page (tests run from the sources, unbuilt). */
  docsFile?: string;
  slowClients?: ServiceOptions['slowClients'];
}

/** A stand-in for the built docs page, so that `/-/docs` answers as on a built server. */
function standInDocs(dir: string): string {
  const file = join(dir, 'docs.html');
  writeFileSync(file, '<!doctype html><title>chatbridge API docs (stand-in)</title>');
  return file;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'chatbridge-test-'));
  const store = options.store ?? new SqliteEndpointStore(join(dir, 'store.sqlite'));
  const adminToken = options.adminToken === undefined ? TEST_ADMIN_TOKEN : options.adminToken;
  const running = await startService(
    {
      store,
      logger: options.logger ?? createLogger('silent'),
      adminTokenHash: adminToken === null ? undefined : hashToken(adminToken),
      allowPrivateWebhooks: options.allowPrivateWebhooks ?? false,
      validateResponses: options.validateResponses ?? true,
      messageTtlMs: options.messageTtlMs ?? 30_000,
      ...(options.messageQueueLimits && { messageQueueLimits: options.messageQueueLimits }),
      ...(options.clock && { clock: options.clock }),
      relay: { pollMs: 50, ...options.relay },
      ...(options.rateLimits && { rateLimits: options.rateLimits }),
      ...(options.corsOrigins && { corsOrigins: options.corsOrigins }),
      ...(options.events && { events: options.events }),
      ...(options.connections && { connections: options.connections }),
      ...(options.managementPort !== undefined && { managementPort: options.managementPort }),
      ...(options.trustProxy !== undefined && { trustProxy: options.trustProxy }),
      ...(options.slowClients && { slowClients: options.slowClients }),
      docsFile: options.docsFile ?? standInDocs(dir),
    },
    0,
    '127.0.0.1',
  );
  return {
    ...running,
    store,
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
