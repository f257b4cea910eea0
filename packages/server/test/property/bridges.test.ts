// Property: random sequences of updates (appending, or overwriting with `index`), removals and message
// writes, run through the same decisions the handlers commit, on SQLite (and PostgreSQL when
// DATABASE_URL is set), keep bridges aligned and the lookup index equal to a scan of the records.
//
// Alignment, given the update rules: updateEndpoint appends to each list on its own (a webhook may be
// appended without a channel), so lists of one platform, and of different platforms, need not be of
// equal length, nor hold "matching" values; nothing the service does can promise that. What it does
// promise is that no operation moves one list's elements relative to another's: two elements that
// stand at the same position of their lists (channels.X[i] and webhooks.X[i], or channels.X[i] and
// channels.Y[i]) still stand at one position as each other after any operation, as long as both are
// still there. Appending adds at the end; `index` replaces one value in place; removing bridge i takes
// position i out of every list that has it (the later elements of every list move down together).
//
//   FC_SEED  seed (default below); FC_RUNS  sequences per store (default 40; PostgreSQL runs a third)
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EndpointRecord, type Platform, PLATFORMS, WEBHOOK_PLATFORMS, initialRecord } from '../../src/domain/record.ts';
import { decideRemoval, type RemovalParams } from '../../src/domain/removal.ts';
import type { UpdateParams } from '../../src/domain/update.ts';
import { decideUpdate, type UpdateContext } from '../../src/domain/updateDecision.ts';
import type { EndpointStore } from '../../src/store/port.ts';
import { PostgresEndpointStore } from '../../src/store/postgres/store.ts';
import { SqliteEndpointStore } from '../../src/store/sqlite/store.ts';
import { hashToken } from '../../src/tokens.ts';
import { createScratchDatabase, type ScratchDatabase } from '../store/pgScratch.ts';

const SEED = Number(process.env.FC_SEED ?? 20_261_127);
const RUNS = Number(process.env.FC_RUNS ?? 40);
const ENDPOINTS = 3;
/** Values per list: few, so that appends collide with present values and positions get reused. */
const VALUES = 5;

const context: UpdateContext = { allowPrivateWebhooks: false, now: 1_700_000_000_000, messageTtlMs: 30_000, webhookBody: () => undefined };
const channelOf = (run: number, p: Platform, n: number) => `r${run}-${p}-ch${n}`;
const webhookOf = (run: number, p: Platform, n: number) => `https://hooks.example.com/r${run}/${p}/${n}/abcdefghijklmnopqrstuvwxyz`;

type Op =
  | { kind: 'update'; endpoint: number; index: number | undefined; channels: [Platform, number][]; webhooks: [Platform, number][] }
  | { kind: 'remove'; endpoint: number; bridge: number }
  | { kind: 'message'; endpoint: number; text: string };

const listParams = <P extends readonly Platform[]>(platforms: P) =>
  fc.uniqueArray(fc.tuple(fc.constantFrom(...platforms), fc.nat(VALUES - 1)), { selector: ([p]) => p, maxLength: platforms.length });

const endpointArb = fc.nat(ENDPOINTS - 1);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  // Appending (a bridge's channels and webhooks together, or any of them alone).
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('update' as const),
      endpoint: endpointArb,
      index: fc.constant(undefined),
      channels: listParams(PLATFORMS),
      webhooks: listParams(WEBHOOK_PLATFORMS),
    }),
  },
  // Overwriting with `index`: one list at a low position, so that it often exists (when it does not,
  // or the value stands elsewhere in the list, the update is refused and nothing is applied).
  {
    weight: 3,
    arbitrary: fc
      .record({
        endpoint: endpointArb,
        index: fc.nat(1),
        channel: fc.boolean(),
        platform: fc.constantFrom(...PLATFORMS),
        value: fc.nat(VALUES - 1),
      })
      .map(({ endpoint, index, channel, platform, value }): Op => {
        const webhookPlatform = platform === 'chat_a' || platform === 'chat_c' ? 'chat_a' : 'chat_b';
        return {
          kind: 'update',
          endpoint,
          index,
          channels: channel ? [[platform, value]] : [],
          webhooks: channel ? [] : [[webhookPlatform, value]],
        };
      }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('remove' as const), endpoint: endpointArb, bridge: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('message' as const), endpoint: endpointArb, text: fc.string({ maxLength: 5 }) }) },
);

/** Every list a bridge spans: each platform's channels, and the webhooks of those that have them. */
const listsOf = (r: EndpointRecord): [string, string[]][] => [
  ...PLATFORMS.map((p): [string, string[]] => [`channels.${p}`, r.config.channels[p]]),
  ...WEBHOOK_PLATFORMS.map((p): [string, string[]] => [`webhooks.${p}`, r.config.webhooks[p]]),
];

/** Pairs of elements at one position before that are both still there after, but no longer at one position. */
function misaligned(before: EndpointRecord, after: EndpointRecord): string[] {
  const was = listsOf(before);
  const now = new Map(listsOf(after));
  const found: string[] = [];
  for (const [nameL, listL] of was) {
    for (const [nameM, listM] of was) {
      if (nameL >= nameM) continue;
      for (let i = 0; i < Math.min(listL.length, listM.length); i++) {
        const at = now.get(nameL)!.indexOf(listL[i]!);
        const atM = now.get(nameM)!.indexOf(listM[i]!);
        if (at >= 0 && atM >= 0 && at !== atM) found.push(`${nameL}[${i}] and ${nameM}[${i}] now at ${at} and ${atM}`);
      }
    }
  }
  return found;
}

function paramsOf(run: number, op: Extract<Op, { kind: 'update' }>): UpdateParams {
  const params: Record<string, unknown> = {};
  for (const [p, n] of op.channels) params[`channel_${p}`] = channelOf(run, p, n);
  for (const [p, n] of op.webhooks) params[`webhook_${p}`] = webhookOf(run, p, n);
  if (op.index !== undefined) params.index = op.index;
  return params as UpdateParams;
}

/** Operations that changed a record, by kind: the sequences must reach lists long enough to matter. */
const applied = { append: 0, overwrite: 0, remove: 0 };

async function apply(store: EndpointStore, run: number, id: string, op: Op): Promise<void> {
  if (op.kind === 'update') {
    const result = await store.endpoints.update(id, (cur) => decideUpdate(cur!, paramsOf(run, op), context));
    if (result.kind === 'ok') applied[op.index === undefined ? 'append' : 'overwrite']++;
  } else if (op.kind === 'remove') {
    const params: RemovalParams = { bridge: op.bridge };
    const result = await store.endpoints.update(id, (cur) => decideRemoval(cur!, params));
    if (result.kind === 'ok') applied.remove++;
  } else {
    await store.endpoints.update(id, (cur) => decideUpdate(cur!, { message_content: op.text }, context));
  }
}

/** The lookup index's answer for every channel a run can produce, and the same computed from the records. */
async function indexAndScan(store: EndpointStore, run: number, ids: string[]) {
  const records = await Promise.all(ids.map(async (id) => (await store.endpoints.get(id))!.record));
  const index: string[] = [];
  const scan: string[] = [];
  for (const p of PLATFORMS) {
    for (let n = 0; n < VALUES; n++) {
      const channel = channelOf(run, p, n);
      for (const m of await store.endpoints.lookupChannel(p, channel, 100)) index.push(`${p} ${channel} ${m.endpoint} ${m.bridge}`);
      ids.forEach((id, k) =>
        records[k]!.config.channels[p].forEach((c, bridge) => c === channel && scan.push(`${p} ${channel} ${id} ${bridge}`)),
      );
    }
  }
  return { index, scan };
}

const STORES = ['sqlite', ...(process.env.DATABASE_URL ? ['postgres' as const] : [])] as const;

describe.each(STORES)('bridges on %s', (kind) => {
  let store: EndpointStore;
  let db: ScratchDatabase | undefined;
  beforeAll(async () => {
    Object.assign(applied, { append: 0, overwrite: 0, remove: 0 });
    if (kind === 'postgres') {
      db = await createScratchDatabase(process.env.DATABASE_URL!);
      store = await PostgresEndpointStore.open({ connectionString: db.url, poolSize: 4 });
    } else {
      store = new SqliteEndpointStore(join(mkdtempSync(join(tmpdir(), 'chatbridge-bridges-')), 'store.sqlite'));
    }
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  it('when random updates (with and without index), removals and messages run, then aligned elements stay aligned, removals splice every list at once, and the lookup index equals a scan of the records', async () => {
    let run = 0;
    const numRuns = kind === 'postgres' ? Math.ceil(RUNS / 3) : RUNS;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 10, maxLength: 30 }), async (ops) => {
        run++; // each run (shrinking included) has endpoints and channel values of its own
        const ids = Array.from({ length: ENDPOINTS }, (_, k) => `r${run}-e${k}`);
        for (const id of ids) await store.endpoints.create(id, hashToken('t'), initialRecord());
        for (const op of ops) {
          const id = ids[op.endpoint]!;
          const before = (await store.endpoints.get(id))!.record;
          await apply(store, run, id, op);
          const after = (await store.endpoints.get(id))!.record;
          expect(misaligned(before, after), JSON.stringify(op)).toEqual([]);
          if (op.kind === 'remove') {
            const longest = Math.max(...listsOf(before).map(([, l]) => l.length));
            const spliced = structuredClone(before);
            if (op.bridge < longest) for (const [, list] of listsOf(spliced)) list.splice(op.bridge, 1);
            expect(after.config).toEqual(spliced.config);
          }
          const { index, scan } = await indexAndScan(store, run, ids);
          expect(index).toEqual(scan);
        }
        for (const id of ids) await store.endpoints.delete(id);
        expect((await indexAndScan(store, run, [])).index).toEqual([]);
      }),
      { seed: SEED, numRuns },
    );
    // The sequences did reach what they test: every kind of change was applied, many times.
    expect(Math.min(applied.append, applied.overwrite, applied.remove)).toBeGreaterThanOrEqual(numRuns / 4);
  }, 60_000);
});
