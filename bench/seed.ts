// Seeding child process: provisions benchmark endpoints on the store the environment configures
// (the server's own configuration: CHATBRIDGE_STORE, CHATBRIDGE_SQLITE_PATH, DATABASE_URL...), through
// the same port the server uses.
//
//   node bench/seed.ts --count N --sample K --prefix P --out FILE [--bulk]
//   node bench/seed.ts --delete-prefix P        (removes a run's endpoints from a shared database)
//
// Every endpoint gets its own token and the record of bench/lib/record.ts, created with
// EndpointStore.create (one committed transaction each); --bulk (SQLite only, for the large store)
// lets the store create the file and its schema, then inserts rows of the same layout in batched
// transactions. A sample is read back through the store either way, proving the rows are what the
// server will see. On PostgreSQL the database is vacuumed and analysed afterwards, so that no run
// measures the dead rows of the runs before it. The output file holds the record JSON and K (id,
// token) pairs spread over the whole ID range, in a shuffled order.
import { writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../packages/server/src/config.ts';
import { openStore } from '../packages/server/src/store/open.ts';
import { hashToken, issueToken, tokenMatchesDigest } from '../packages/server/src/tokens.ts';
import { benchRecord } from './lib/record.ts';

export interface SeedOutput {
  count: number;
  seconds: number;
  recordJson: string;
  endpoints: { id: string; token: string }[];
}

const BULK_BATCH = 5_000;

const { values: opts } = parseArgs({
  options: {
    count: { type: 'string', default: '100' },
    sample: { type: 'string', default: '100' },
    prefix: { type: 'string', default: 'bench-' },
    out: { type: 'string' },
    bulk: { type: 'boolean', default: false },
    'delete-prefix': { type: 'string' },
  },
});

/** Deterministic shuffle (mulberry32), so that runs request the same sequence. */
function shuffle<T>(items: T[]): T[] {
  let s = 0x5eed;
  const rand = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

const idOf = (prefix: string, i: number) => `${prefix}${String(i).padStart(6, '0')}`;

async function vacuum(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('VACUUM (ANALYZE)');
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const store = await openStore(config.store); // creates the file or schema (migrations)
  const databaseUrl = config.store.kind === 'postgres' ? process.env.DATABASE_URL : undefined;
  const sqlitePath = config.store.kind === 'sqlite' ? config.store.sqlitePath : undefined;
  const prefixToDelete = opts['delete-prefix'];
  if (prefixToDelete) {
    let deleted = 0;
    try {
      for (let ids = await store.listIds(prefixToDelete, 1000); ids.some((id) => id.startsWith(prefixToDelete)); ids = await store.listIds(prefixToDelete, 1000)) {
        for (const id of ids) if (id.startsWith(prefixToDelete) && (await store.delete(id))) deleted++;
      }
    } finally {
      await store.close();
    }
    console.log(`deleted ${deleted} endpoints`);
    return;
  }

  const count = Number(opts.count);
  const sampleSize = Math.min(count, Number(opts.sample));
  const prefix = opts.prefix!;
  if (!opts.out || !Number.isInteger(count) || count < 1 || !Number.isInteger(sampleSize) || sampleSize < 1) {
    throw new Error('usage: seed.ts --count N --sample K --prefix P --out FILE [--bulk]');
  }
  if (opts.bulk && sqlitePath === undefined) throw new Error('--bulk is for the SQLite store only');
  const record = benchRecord();
  const recordJson = JSON.stringify(record);
  const sampled = new Set<number>();
  for (let k = 0; k < sampleSize; k++) sampled.add(Math.floor((k * count) / sampleSize));
  const endpoints: SeedOutput['endpoints'] = [];
  const started = performance.now();
  try {
    if (!opts.bulk) {
      for (let i = 0; i < count; i++) {
        const token = issueToken();
        if (!(await store.create(idOf(prefix, i), hashToken(token), record))) throw new Error(`${idOf(prefix, i)} exists`);
        if (sampled.has(i)) endpoints.push({ id: idOf(prefix, i), token });
      }
    }
  } finally {
    await store.close();
  }
  if (opts.bulk) {
    const db = new DatabaseSync(sqlitePath!);
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;');
    const insert = db.prepare('INSERT INTO endpoints (id, token_hash, record) VALUES (?, ?, ?)');
    for (let from = 0; from < count; from += BULK_BATCH) {
      db.exec('BEGIN IMMEDIATE');
      for (let i = from; i < Math.min(count, from + BULK_BATCH); i++) {
        const token = issueToken();
        insert.run(idOf(prefix, i), hashToken(token), recordJson);
        if (sampled.has(i)) endpoints.push({ id: idOf(prefix, i), token });
      }
      db.exec('COMMIT');
    }
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    db.close();
  }
  const seconds = (performance.now() - started) / 1000;

  const check = await openStore(config.store);
  try {
    for (const e of endpoints.slice(0, 20)) {
      const found = await check.get(e.id);
      if (!found || !tokenMatchesDigest(found.tokenHash, e.token) || !isDeepStrictEqual(found.record, record)) {
        throw new Error(`seeded endpoint ${e.id} does not read back through the store`);
      }
    }
  } finally {
    await check.close();
  }
  if (databaseUrl) await vacuum(databaseUrl);
  writeFileSync(opts.out, JSON.stringify({ count, seconds, recordJson, endpoints: shuffle(endpoints) } satisfies SeedOutput));
  console.log(`seeded ${count} endpoints (${config.store.kind}${opts.bulk ? ', bulk' : ''}) in ${seconds.toFixed(1)} s`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
