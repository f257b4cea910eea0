// Property-based hostile-input tests, generated from the bundled spec. For every operation of the
// spec (new ones are picked up automatically) fast-check builds thousands of raw requests: valid,
// boundary (min, max, min-1, max+1), wrong types, empty and bare values, repeated and unknown
// parameters, control characters, invalid UTF-8 and stray '%', very long values (~100 KB), hostile
// bodies; plus hostile request lines. Each goes out byte for byte over a socket to a real server,
// and the invariants of oracle.ts are checked on the answer and on the store.
//
//   FC_SEED   seed (default below); printed, with the counterexample, on failure
//   FC_RUNS   runs per unit (default 500): an operation gets one unit per 10 query parameters (at
//             least one), the request-line property two; PostgreSQL runs a quarter of SQLite's. With
//             the spec's 20 operations that is 15,375 cases
//   FC_SURVEY 1: record violations instead of failing at the first, and list them all at the end
//
// Reproduce a failure: FC_SEED=<seed> pnpm exec vitest run --project server test/property -t '<operationId>'
// (each property starts from the same store contents, so it replays its requests on its own).
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { openStore } from '../../src/store/open.ts';
import { startTestServer, type TestServer } from '../../src/testing.ts';
import { createScratchDatabase } from '../store/pgScratch.ts';
import { type Draft, POOL, POOL_PROVISIONED, draftArb, render } from './cases.ts';
import { HEAD_LIMIT, type Row, type Snapshot, check, factsOf, problemViolations, sentParams } from './oracle.ts';
import { PARSER_MAY_ANSWER, lineDraftArb, renderLine } from './requestLine.ts';
import { type OperationSpec, loadSpec } from './spec.ts';
import { Tally } from './tally.ts';
import { type RawResponse, encodeRequest, exchange, headSize } from './wire.ts';

const SEED = Number(process.env.FC_SEED ?? 20_261_122);
const RUNS = Number(process.env.FC_RUNS ?? 500);
const SURVEY = process.env.FC_SURVEY === '1';
const TIMEOUT = 15 * 60_000;

const spec = loadSpec();
const tally = new Tally();
const unitsOf = (op: OperationSpec) => Math.max(1, Math.ceil(op.params.filter((p) => p.in === 'query').length / 10));
const LINE_UNITS = 2;
/** Every store the run can reach: PostgreSQL too whenever DATABASE_URL is set (CI always sets it). */
const STORES = ['sqlite', ...(process.env.DATABASE_URL ? ['postgres' as const] : [])] as const;
type StoreKind = (typeof STORES)[number];
/** PostgreSQL runs a quarter of the cases: the same generators, a bounded share of the run time. */
const runsOn = (kind: StoreKind, runs: number) => (kind === 'postgres' ? Math.ceil(runs / 4) : runs);
const plannedCases =
  STORES.reduce((n, kind) => n + spec.operations.reduce((m, op) => m + runsOn(kind, RUNS * unitsOf(op)), 0), 0) + RUNS * LINE_UNITS;
console.log(
  `[property] seed ${SEED} (FC_SEED), ${RUNS} runs per unit (FC_RUNS); ${spec.operations.length} operations from the spec: ` +
    `${spec.operations.map((op) => `${op.operationId}x${unitsOf(op)}`).join(', ')}, request lines x${LINE_UNITS}; stores ${STORES.join(', ')}; ` +
    `${plannedCases} cases planned${SURVEY ? '; survey mode' : ''}`,
);

interface Ctx {
  server: TestServer;
  tokens: Map<string, string>;
  host: string;
  /** What the last exchange left in the store, for the next one's "before": nothing else writes in between. */
  last?: Snapshot;
}

interface SharedServer {
  server: TestServer;
  close(): Promise<void>;
}

/**
 * One server per store, shared by that store's properties: starting one (its validator reads and
 * compiles the whole spec, its routes compile on first use, PostgreSQL needs a database) costs as
 * much as a few hundred cases. Each property still starts from the same store contents (see
 * `withServer`).
 */
const shared = new Map<StoreKind, Promise<SharedServer>>();

async function startShared(kind: StoreKind): Promise<SharedServer> {
  const db = kind === 'postgres' ? await createScratchDatabase(process.env.DATABASE_URL!) : undefined;
  const store = db ? await openStore({ kind: 'postgres', databaseUrl: db.url, poolSize: 4 }) : undefined;
  // A TTL far beyond the run, so no pending message expires between two snapshots.
  const server = await startTestServer({ messageTtlMs: 24 * 3600_000, ...(store && { store }) });
  // No webhook delivery: the generated webhook URLs name real hosts (the spec's examples), and
  // these tests talk to loopback only. The relay has its own tests. With it stopped, only the
  // requests of the test write to the store.
  await server.relay.stop();
  return {
    server,
    async close() {
      await server.close();
      await db?.drop();
    },
  };
}

afterAll(async () => {
  for (const started of shared.values()) await (await started).close();
});

/**
 * Runs `fn` against the store's shared server, emptied and provisioned with `pool-0` to `pool-3`
 * (new tokens) as a new server would be: whatever the properties before created, changed or
 * deleted is gone, so a property re-run on its own (`-t`) meets the same records.
 */
async function withServer(kind: StoreKind, fn: (ctx: Ctx) => Promise<void>): Promise<void> {
  if (!shared.has(kind)) shared.set(kind, startShared(kind));
  const { server } = await shared.get(kind)!;
  const { store } = server;
  for (const id of await store.endpoints.listIds(undefined, 1_000_000)) await store.endpoints.delete(id);
  for (const bot of await store.bots.list()) await store.bots.delete(bot.id);
  const tokens = new Map<string, string>();
  for (const id of POOL.slice(0, POOL_PROVISIONED)) tokens.set(id, await server.provision(id));
  // Host without the port: the bytes of every request, and so every head size, do not depend on the port.
  await fn({ server, tokens, host: '127.0.0.1' });
}

/** Only IDs the spec allows can be stored; others (e.g. holding NUL, which PostgreSQL refuses) are absent. */
const STORABLE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The watched rows, the ID list and the bots. From `ctx.last` (what the previous exchange left) where
 * it has them: a row is read again only if the last snapshot did not watch it.
 */
async function snapshot(ctx: Ctx, ids: Iterable<string>, known?: Snapshot): Promise<Snapshot> {
  const rows = new Map<string, Row | undefined>();
  for (const id of ids) {
    if (known?.rows.has(id)) {
      rows.set(id, known.rows.get(id));
      continue;
    }
    if (!STORABLE_ID.test(id)) {
      rows.set(id, undefined);
      continue;
    }
    const stored = await ctx.server.store.endpoints.get(id);
    rows.set(
      id,
      stored && {
        token: Buffer.from(stored.tokenHash).toString('hex'),
        record: JSON.stringify(stored.record),
        state: JSON.stringify(stored.state ?? null),
      },
    );
  }
  if (known) return { ids: known.ids, bots: known.bots, rows };
  const bots = (await ctx.server.store.bots.list()).map((b) => b.id);
  return { ids: await ctx.server.store.endpoints.listIds(undefined, 1_000_000), bots, rows };
}

/** The store before an exchange: as the last one left it. */
const snapshotBefore = (ctx: Ctx, ids: Iterable<string>) => snapshot(ctx, ids, ctx.last);

/**
 * The store after an exchange, kept for the next one. After an exchange that got no complete answer
 * the server may still be working on it: the next snapshot reads everything again.
 */
async function snapshotAfter(ctx: Ctx, ids: Iterable<string>, answered: boolean): Promise<Snapshot> {
  const after = await snapshot(ctx, ids);
  ctx.last = answered ? after : undefined;
  return after;
}

function watchedIds(draft: Draft): Set<string> {
  const ids = new Set<string>(POOL);
  for (const choice of Object.values(draft.path)) {
    if (choice.kind === 'pool') continue;
    try {
      ids.add(decodeURIComponent(choice.raw));
    } catch {
      /* not decodable: cannot name a stored endpoint */
    }
  }
  if (draft.body) {
    try {
      const id = (JSON.parse(draft.body.bytes.toString('utf8')) as { id?: unknown } | null)?.id;
      if (typeof id === 'string') ids.add(id);
    } catch {
      /* not JSON */
    }
  }
  return ids;
}

/** Request and response as text for a report, tokens replaced by who they belong to. */
function describeExchange(ctx: Ctx, request: Buffer, response: RawResponse | undefined, error?: unknown): string {
  let req = request.toString('latin1');
  let res = response
    ? `${response.status}${response.fromParser ? " (from Node's parser)" : ''} ${response.headers.get('content-type') ?? '(no content-type)'}\n${response.body.toString('utf8')}`
    : `no response: ${String(error)}`;
  for (const [id, token] of ctx.tokens) {
    req = req.split(token).join(`<token of ${id}>`);
    res = res.split(token).join(`<token of ${id}>`);
  }
  const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s);
  return `request:\n${clip(JSON.stringify(req), 1500)}\nresponse:\n${clip(res, 800)}`;
}

function conclude(
  ctx: Ctx,
  property: string,
  request: Buffer,
  response: RawResponse | undefined,
  violations: string[],
  error?: unknown,
): void {
  tally.record(property, response?.status, response?.fromParser ?? false);
  if (violations.length === 0) return;
  const example = describeExchange(ctx, request, response, error);
  for (const v of violations) tally.violation(property, v, example);
  if (!SURVEY) throw new Error(`${violations.join('\n')}\n${example}`);
}

async function assertRecorded<T>(name: string, property: fc.IAsyncPropertyWithHooks<T>, numRuns: number): Promise<void> {
  try {
    await fc.assert(property, { seed: SEED, numRuns });
  } catch (error) {
    tally.failedProperties.push(name);
    throw error;
  }
}

describe('hostile input, generated from the spec', () => {
  afterAll(() => {
    for (const [property, n] of tally.perProperty) console.log(`[property]   ${property}: ${n} cases`);
    const observed = [...tally.observations].sort(([a], [b]) => a.localeCompare(b));
    if (observed.length)
      console.log(
        `[property] values the spec leaves open, and what became of them:\n${observed.map(([k, n]) => `  ${k}: ${n}`).join('\n')}`,
      );
    for (const e of tally.violations.values()) console.log(`[property] VIOLATION x${e.count} ${e.signature}\n${e.example}\n`);
  });

  for (const kind of STORES)
    for (const op of spec.operations) {
      const numRuns = runsOn(kind, RUNS * unitsOf(op));
      it(
        `[${kind}] ${op.operationId} (${op.method} ${op.path}): ${numRuns} hostile requests, never a 5xx, errors name the parameter, rejected requests change nothing`,
        async () => {
          await withServer(kind, async (ctx) => {
            const property = fc.asyncProperty(draftArb(op), async (draft) => {
              const rendered = render(draft, {
                token: (id) => ctx.tokens.get(id) ?? ctx.tokens.get(POOL[0])!,
                adminToken: ctx.server.adminToken,
              });
              const watch = watchedIds(draft);
              const bytes = encodeRequest(ctx.host, rendered.request);
              const before = await snapshotBefore(ctx, watch);
              let response: RawResponse | undefined;
              let error: unknown;
              try {
                response = await exchange(ctx.server.port, bytes, rendered.request.method);
              } catch (e) {
                error = e;
              }
              const after = await snapshotAfter(ctx, watch, response !== undefined);
              const tokenOf = (id: string) => ctx.tokens.get(id);
              const violations = response
                ? check({ spec, draft, rendered, headBytes: headSize(bytes), response, before, after, tokenOf })
                : [`no complete response: ${String(error)}`];
              if (response && !response.fromParser) {
                const facts = factsOf({ draft, rendered, tokenOf });
                for (const item of draft.items) {
                  const key = sentParams(`${item.key}=`)[0]?.key;
                  if (key !== undefined && facts.queryVerdicts.get(key) === 'unknown')
                    tally.observe(`${op.operationId} ${item.kind.split('/')[0]} -> ${response.status}`);
                }
              }
              conclude(ctx, op.operationId, bytes, response, violations, error);
            });
            await assertRecorded(op.operationId, property, numRuns);
          });
        },
        TIMEOUT,
      );
    }

  it(
    `request lines: ${RUNS * LINE_UNITS} raw bytes, odd forms, odd methods and heads around 128 KiB, never a 5xx`,
    async () => {
      await withServer('sqlite', async (ctx) => {
        const property = fc.asyncProperty(lineDraftArb(spec), async (d) => {
          const line = renderLine(d, { token: ctx.tokens.get(POOL[0])!, adminToken: ctx.server.adminToken });
          const bytes = encodeRequest(ctx.host, line);
          const before = await snapshotBefore(ctx, POOL);
          let response: RawResponse | undefined;
          let error: unknown;
          try {
            response = await exchange(ctx.server.port, bytes, line.method);
          } catch (e) {
            error = e;
          }
          const after = await snapshotAfter(ctx, POOL, response !== undefined);
          const v: string[] = [];
          const head = headSize(bytes);
          if (!response) v.push(`no complete response: ${String(error)}`);
          else {
            const { status } = response;
            if (status >= 500) v.push(`server error ${status}`);
            if (response.fromParser) {
              if (!PARSER_MAY_ANSWER.has(d.mutation.kind))
                v.push(`Node's parser answered ${status} to a request it should have passed on (${d.mutation.kind})`);
              else if (d.mutation.kind === 'oversize' && head <= HEAD_LIMIT - 512)
                v.push(`Node's parser answered ${status} to a ${head}-byte head, within the 128 KiB the spec promises`);
              v.push(...problemViolations(spec, status, response, undefined));
            } else if (status >= 400) {
              v.push(...problemViolations(spec, status, response, line.rawPath));
              if (status === 400) {
                const errors = (JSON.parse(response.body.toString('utf8') || 'null') as { errors?: unknown } | null)?.errors;
                if (!Array.isArray(errors) || errors.length === 0) v.push('400 without a non-empty "errors" array naming the parameter');
              }
            }
            if (d.mutation.kind === 'oversize' && head > HEAD_LIMIT + 512 && status < 400)
              v.push(`a ${head}-byte head was accepted (${status})`);
            const ok = status >= 200 && status < 300;
            if ((!ok || line.method === 'GET') && JSON.stringify([...before.rows]) !== JSON.stringify([...after.rows]))
              v.push(`a ${status} to ${line.method} changed a stored row`);
          }
          // The server must still be alive and answering.
          const live = await exchange(
            ctx.server.port,
            encodeRequest(ctx.host, { method: 'GET', target: Buffer.from('/-/live'), headers: [] }),
            'GET',
          ).catch((e: unknown) => e);
          if (!(live && typeof live === 'object' && 'status' in live && live.status === 200))
            v.push(`the server stopped answering /-/live: ${String((live as { status?: number }).status ?? live)}`);
          conclude(
            ctx,
            'request lines',
            bytes,
            response,
            v.map((m) => `(${d.mutation.kind}${d.mutation.kind === 'method' ? ` ${d.mutation.method}` : ''}) ${m}`),
            error,
          );
        });
        await assertRecorded('request lines', property, RUNS * LINE_UNITS);
      });
    },
    TIMEOUT,
  );

  it('summary: every case answered, no 5xx', () => {
    console.log(tally.summary(SEED, RUNS, plannedCases));
    expect(tally.noResponse).toBe(0);
    expect(tally.serverErrors).toBe(0);
    if (SURVEY) expect([...tally.violations.keys()]).toEqual([]);
  });
});
