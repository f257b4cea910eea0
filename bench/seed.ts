// Seeding child process: provisions benchmark endpoints on the store the environment configures
// (the server's own configuration: CHATBRIDGE_STORE, CHATBRIDGE_SQLITE_PATH, DATABASE_URL...), so a
// new store adapter is seeded through the same port the server uses, with no change here.
//
//   node bench/seed.ts --count N --sample K --prefix P --out FILE [--mode auto|store|bulk] [--store-budget S]
//   node bench/seed.ts --delete-prefix P        (removes a run's endpoints from a shared database)
//
// Every endpoint gets its own token and the record of bench/lib/record.ts. --mode store calls
// EndpointStore.create once per endpoint (one committed transaction each). --mode bulk (SQLite only)
// lets the store create the file and its schema, then inserts rows of the same layout in batched
// transactions on its own node:sqlite connection. auto (the default): the store API, unless on SQLite
// the first PROBE_ROWS rows project more than --store-budget seconds in all, then bulk for the rest. Either way a
// sample is read back through the store, proving the rows are what the server will see.
// The output file holds the record JSON and K (id, token) pairs spread over the whole ID range, in
// a shuffled order.
import { writeFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { isDeepStrictEqual } from 'node:util';
import { loadConfig } from '../packages/server/src/config.ts';
import { openStore } from '../packages/server/src/store/open.ts';
import type { EndpointStore } from '../packages/server/src/store/port.ts';
import { hashToken, issueToken, tokenMatchesDigest } from '../packages/server/src/tokens.ts';
import { benchRecord } from './lib/record.ts';

export interface SeedOutput {
  store: string;
  count: number;
  /** Endpoints created through EndpointStore.create; the rest were bulk-inserted. */
  viaStore: number;
  seconds: number;
  recordJson: string;
  endpoints: { id: string; token: string }[];
}

const BATCH = 5_000;
/** auto: rows timed through the store API before deciding whether to finish in bulk. */
const PROBE_ROWS = 2_000;
const DEFAULT_STORE_SEED_BUDGET_S = 45;

const { values: opts } = parseArgs({
  options: {
    count: { type: 'string', default: '100' },
    sample: { type: 'string', default: '100' },
    prefix: { type: 'string', default: 'bench-' },
    out: { type: 'string' },
    mode: { type: 'string', default: 'auto' },
    'store-budget': { type: 'string', default: String(DEFAULT_STORE_SEED_BUDGET_S) },
    'delete-prefix': { type: 'string' },
  },
});

/** Deterministic shuffle (mulberry32), so runs request the same sequence. */
function shuffle<T>(items: T[], seed = 0x5eed): T[] {
  let s = seed >>> 0;
  const rand = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
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

async function deletePrefix(store: EndpointStore, prefix: string): Promise<number> {
  let deleted = 0;
  for (;;) {
    const ids = (await store.listIds(prefix, 1000)).filter((id) => id.startsWith(prefix));
    if (ids.length === 0) return deleted;
    for (const id of ids) if (await store.delete(id)) deleted++;
  }
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  if (opts['delete-prefix']) {
    const store = await openStore(config.store);
    try {
      console.log(`deleted ${await deletePrefix(store, opts['delete-prefix'])} endpoints`);
    } finally {
      await store.close();
    }
    return;
  }

  const count = Number(opts.count);
  const sampleSize = Math.min(count, Number(opts.sample));
  const prefix = opts.prefix!;
  if (!opts.out || !Number.isInteger(count) || count < 1 || !Number.isInteger(sampleSize) || sampleSize < 1) {
    throw new Error('usage: seed.ts --count N --sample K --prefix P --out FILE [--mode auto|store|bulk]');
  }
  const mode = opts.mode === 'auto' ? 'store' : opts.mode;
  if (mode !== 'store' && mode !== 'bulk') throw new Error(`unknown --mode ${opts.mode}`);
  const sqlitePath = config.store.kind === 'sqlite' ? config.store.sqlitePath : undefined;
  if (mode === 'bulk' && sqlitePath === undefined) throw new Error('--mode bulk is for the SQLite store only');

  const record = benchRecord();
  const recordJson = JSON.stringify(record);
  const step = count / sampleSize;
  const sampled = new Set<number>();
  for (let k = 0; k < sampleSize; k++) sampled.add(Math.floor(k * step));
  const endpoints: SeedOutput['endpoints'] = [];

  const started = performance.now();
  let viaStore = 0;
  const store = await openStore(config.store); // creates the file/schema (migrations)
  try {
    if (mode === 'store') {
      for (; viaStore < count; viaStore++) {
        const i = viaStore;
        const token = issueToken();
        if (!(await store.create(idOf(prefix, i), hashToken(token), record))) throw new Error(`${idOf(prefix, i)} exists`);
        if (sampled.has(i)) endpoints.push({ id: idOf(prefix, i), token });
        // auto on SQLite: a disk with slow fsync would make one commit per row take minutes; finish in bulk.
        if (i === PROBE_ROWS && opts.mode === 'auto' && sqlitePath !== undefined) {
          const projected = ((performance.now() - started) / PROBE_ROWS) * count;
          if (projected > Number(opts['store-budget']) * 1000) {
            viaStore++;
            break;
          }
        }
      }
    }
    if (viaStore < count && sqlitePath !== undefined) {
      await store.close();
      const db = new DatabaseSync(sqlitePath);
      db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;');
      const insert = db.prepare('INSERT INTO endpoints (id, token_hash, record) VALUES (?, ?, ?)');
      for (let from = viaStore; from < count; from += BATCH) {
        db.exec('BEGIN IMMEDIATE');
        for (let i = from; i < Math.min(count, from + BATCH); i++) {
          const token = issueToken();
          insert.run(idOf(prefix, i), hashToken(token), recordJson);
          if (sampled.has(i)) endpoints.push({ id: idOf(prefix, i), token });
        }
        db.exec('COMMIT');
      }
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      db.close();
    }
  } finally {
    await store.close();
  }
  const seconds = (performance.now() - started) / 1000;

  // Read a few back through the store: the rows must be what the server will see.
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

  const out: SeedOutput = { store: config.store.kind, count, viaStore, seconds, recordJson, endpoints: shuffle(endpoints) };
  writeFileSync(opts.out, JSON.stringify(out));
  const how = viaStore === count ? 'store API, one transaction each' : `${viaStore} via the store API, ${count - viaStore} bulk`;
  console.log(`seeded ${count} endpoints (${config.store.kind}; ${how}) in ${seconds.toFixed(1)} s`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
