// The server's store is wrapped for metrics; a move reads it through the same port.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEndpoint } from '../../src/admin/endpoints.ts';
import { instrumentStore } from '../../src/observability/instrumentStore.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { SqliteEndpointStore } from '../../src/store/sqlite/store.ts';

describe('instrumented store', () => {
  it('when the instrumented store is exported, then its rows stream as from the store itself', async () => {
    const store = new SqliteEndpointStore(join(mkdtempSync(join(tmpdir(), 'chatbridge-instrumented-')), 'store.sqlite'));
    try {
      await createEndpoint(store, 'ep-1');
      const ids: string[] = [];
      for await (const row of instrumentStore(store, createMetrics()).snapshot.exportRows()) ids.push(row.id);
      expect(ids).toEqual(['ep-1']);
    } finally {
      await store.close();
    }
  });
});
