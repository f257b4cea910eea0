// Seeding child process: provisions benchmark endpoints on the store the environment configures
// (the server's own configuration: CHATBRIDGE_STORE, CHATBRIDGE_SQLITE_PATH, DATABASE_URL...), through
// the store's own import (EndpointStore.importRows: one transaction).
//
//   node bench/seed.ts --count N --prefix P --out FILE [--webhooks ORIGIN | --no-relay | --delivery ORIGIN]
//
// Every endpoint gets its own token and the record of bench/lib/record.ts (--no-relay: selfuse off, so
// that a trigger queues no webhook delivery; --webhooks: its two webhooks at ORIGIN/a and ORIGIN/b;
// --delivery: the delivery scenario's record, chat_c bridged to chat_a only, its webhook ORIGIN/a). A
// few are read back through the store, proving the rows are what the server will see. On PostgreSQL
// the database is analysed afterwards. The output file holds the record JSON and every (id, token).
import { writeFileSync } from 'node:fs';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../packages/server/src/config.ts';
import { openStore } from '../packages/server/src/store/open.ts';
import { hashToken, issueToken, tokenMatchesDigest } from '../packages/server/src/tokens.ts';
import { benchRecord, deliveryRecord } from './lib/record.ts';

export interface SeedOutput {
  count: number;
  seconds: number;
  recordJson: string;
  endpoints: { id: string; token: string }[];
}

const { values: opts } = parseArgs({
  options: {
    count: { type: 'string', default: '100' },
    prefix: { type: 'string', default: 'bench-' },
    out: { type: 'string' },
    webhooks: { type: 'string' },
    'no-relay': { type: 'boolean', default: false },
    delivery: { type: 'string' },
  },
});

const idOf = (prefix: string, i: number) => `${prefix}${String(i).padStart(6, '0')}`;

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const count = Number(opts.count);
  const prefix = opts.prefix!;
  if (!opts.out || !Number.isInteger(count) || count < 1) {
    throw new Error('usage: seed.ts --count N --prefix P --out FILE [--webhooks ORIGIN | --no-relay | --delivery ORIGIN]');
  }
  const record = opts.delivery
    ? deliveryRecord(opts.delivery)
    : benchRecord(opts.webhooks ? { webhooks: opts.webhooks } : { selfuse: !opts['no-relay'] });
  const recordJson = JSON.stringify(record);
  const endpoints: SeedOutput['endpoints'] = [];
  const started = performance.now();
  const store = await openStore(config.store); // creates the file or schema (migrations)
  try {
    const rows = function* () {
      for (let i = 0; i < count; i++) {
        const [id, token] = [idOf(prefix, i), issueToken()];
        endpoints.push({ id, token });
        yield {
          id,
          tokenHash: hashToken(token),
          recordJson,
          state: { seq: 0, pendingSince: null, queue: [] },
          version: 0,
          lastChange: 'record' as const,
          deliveries: [],
          messages: [],
        };
      }
    };
    const outcome = await store.snapshot.importRows(rows());
    if (outcome.imported !== count)
      throw new Error(`imported ${outcome.imported} of ${count} endpoints: ${outcome.conflicts.slice(0, 3).join(', ')} exist`);
    for (const e of endpoints.slice(0, 20)) {
      const found = await store.endpoints.get(e.id);
      if (!found || !tokenMatchesDigest(found.tokenHash, e.token) || !isDeepStrictEqual(found.record, record)) {
        throw new Error(`seeded endpoint ${e.id} does not read back through the store`);
      }
    }
  } finally {
    await store.close();
  }
  // A database server's planner needs statistics of the rows just loaded.
  if ('databaseUrl' in config.store) {
    const client = new pg.Client({ connectionString: config.store.databaseUrl });
    await client.connect();
    await client.query('ANALYZE').finally(() => client.end());
  }
  const seconds = (performance.now() - started) / 1000;
  writeFileSync(opts.out, JSON.stringify({ count, seconds, recordJson, endpoints } satisfies SeedOutput));
  console.log(`seeded ${count} endpoints (${config.store.kind}) in ${seconds.toFixed(1)} s`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
