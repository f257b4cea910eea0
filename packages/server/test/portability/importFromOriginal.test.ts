// Migrating from the original service: `chatbridge import --from-original` on a folder in its layout
// (test/fixtures/original, whose README lists the bad values it holds).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initialRecord } from '../../src/domain/record.ts';
import { parseBodyLine } from '../../src/portability/exportFormat.ts';
import { mapOriginalRecord } from '../../src/portability/originalRecord.ts';
import { loadSpecSchemas } from '../../src/portability/specSchemas.ts';
import { openStore } from '../../src/store/open.ts';
import { SqliteEndpointStore } from '../../src/store/sqlite/store.ts';
import { tokenMatchesDigest } from '../../src/tokens.ts';
import { createScratchDatabase, type ScratchDatabase } from '../store/pgScratch.ts';
import { chatbridge } from './cliRun.ts';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'original');
const tokens = JSON.parse(readFileSync(join(FIXTURE, 'tokens.json'), 'utf8')) as Record<string, string>;
const A = '912345678901234567';
const webhook = (platform: 'a' | 'b', row: number) =>
  `https://chat-${platform}.example.com/api/webhooks/11223344556677889${row}/fixture-webhook-secret-${row}`;

/** The (endpoint, field) pairs the report refused: `refused <id>: <field>: <reason>`. */
const refusedFields = (stdout: string) =>
  stdout
    .split('\n')
    .map((line) => /^refused (\S+): (.+?): /.exec(line))
    .filter((m) => m !== null)
    .map((m) => `${m[1]} ${m[2]}`)
    .sort();

describe('chatbridge import --from-original', () => {
  it('when the folder holds good and bad values, then the good ones are imported, every refusal is named by endpoint and field, and the exit code is 2', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'chatbridge-original-')), 'store.sqlite');
    const result = await chatbridge(file, 'import', '--from-original', FIXTURE);

    expect(result.code).toBe(2);
    expect(refusedFields(result.stdout)).toEqual(
      [
        `${A} config.emojis`,
        `${A} config.emoji_filtering`,
        // Row 1: the too-short chat_b channel, and the rest of its bridge row with it.
        `${A} config.channels.guilded[1]`,
        `${A} config.channels.discord[1]`,
        `${A} config.channels.revolt[1]`,
        `${A} config.webhooks.discord[1]`,
        `${A} config.webhooks.guilded[1]`,
        // Row 2: the plain-http webhook, and the rest of its row.
        `${A} config.webhooks.discord[2]`,
        `${A} config.channels.discord[2]`,
        `${A} config.channels.guilded[2]`,
        `${A} config.channels.revolt[2]`,
        `${A} config.webhooks.guilded[2]`,
        `${A} config.blacklist[1]`, // a number
        `${A} config.blacklist[2]`, // "Spam" after "spam"
        `${A} config.allowed-ids[1]`, // 4 characters
        'bad.id the endpoint',
        'no-token-endpoint the endpoint',
        'orphan-endpoint the endpoint',
      ].sort(),
    );
    expect(result.stdout).not.toContain(tokens[A]);
    expect(result.stdout).toMatch(/^2 imported, 0 unchanged, 3 endpoints refused, 15 values refused$/m);

    const store = new SqliteEndpointStore(file);
    try {
      expect(await store.endpoints.listIds(undefined, 10)).toEqual([A, 'community_b']);
      const a = (await store.endpoints.get(A))!;
      const expected = initialRecord();
      Object.assign(expected.config, {
        'allowed-ids': [A],
        blacklist: ['spam', 'scam'],
        // Rows 0 and 3 survive, still lined up across every list.
        channels: {
          chat_a: ['912345678901234001', '912345678901234004'],
          chat_b: ['guilded-chan-0', 'guilded-chan-3'],
          chat_c: ['revolt-chan-0', 'revolt-chan-3'],
          chat_d: [],
        },
        webhooks: { chat_a: [webhook('a', 0), webhook('a', 3)], chat_b: [webhook('b', 0), webhook('b', 3)], chat_c: [], chat_d: [] },
        logs: { chat_a: '912345678901234999', chat_b: null, chat_c: 'revolt-log-1', chat_d: null },
        isbeta: true,
        // The original delivered itself when self-user was false: chatbridge does when it is true.
        'self-user': true,
      });
      // The pending message of the original is not carried over: the endpoint starts idle.
      expect([a.record, a.state, a.version]).toEqual([expected, { seq: 0, pendingSince: null, queue: [] }, 0]);
      expect(tokenMatchesDigest(a.tokenHash, tokens[A])).toBe(true);

      const b = (await store.endpoints.get('community_b'))!;
      expect(b.record.config['self-user']).toBe(false);
      expect(tokenMatchesDigest(b.tokenHash, tokens.community_b)).toBe(true);
    } finally {
      await store.close();
    }

    // A rerun changes nothing (and still names what it refuses).
    const rerun = await chatbridge(file, 'import', '--from-original', FIXTURE);
    expect(rerun.stdout).toMatch(/^0 imported, 2 unchanged, 3 endpoints refused, 15 values refused$/m);
  });

  it('when an endpoint of the folder has a reserved ID, then it is refused naming it and not imported', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-original-'));
    writeFileSync(join(dir, 'lookup.json'), readFileSync(join(FIXTURE, 'community_b.json')));
    writeFileSync(join(dir, 'tokens.json'), JSON.stringify({ lookup: tokens.community_b }));
    const file = join(dir, 'store.sqlite');
    const result = await chatbridge(file, 'import', '--from-original', dir);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/refused lookup: the endpoint: .*reserved/);
    const store = new SqliteEndpointStore(file);
    try {
      expect(await store.endpoints.get('lookup')).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('when tokens.json is missing, then nothing is imported and it exits 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-original-'));
    const result = await chatbridge(join(dir, 'store.sqlite'), 'import', '--from-original', dir);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('tokens.json');
  });
});

describe('chatbridge import --from-original, IDs the original stored as JSON numbers', () => {
  // Written as the original wrote them: numbers, one past 2^53 (a double would round it to
  // 123456789012345680000), beside strings; 1.5 and -3 are numbers but not IDs, and 42 is not a word.
  const RECORD = `{"config": {"isbeta": false, "self-user": false,
    "channels": {"discord": [123456789012345678901, 912345678901234001, 1.5, -3],
                 "guilded": ["guilded-chan-0", "guilded-chan-1", "guilded-chan-2", "guilded-chan-3"]},
    "logs": {"discord": 912345678901234999},
    "allowed-ids": [98765432109876543210, "912345678901234567"],
    "blacklist": [42, "spam"]}}`;
  const databases: ScratchDatabase[] = [];
  afterAll(async () => {
    await Promise.all(databases.map((d) => d.drop()));
  });
  const scratchDatabase = async () => {
    const database = await createScratchDatabase(process.env.DATABASE_URL!);
    databases.push(database);
    return database.url;
  };
  const stores = [
    { name: 'SQLite', scratch: async (dir: string) => join(dir, 'store.sqlite') },
    ...(process.env.DATABASE_URL ? [{ name: 'PostgreSQL', scratch: scratchDatabase }] : []),
  ];

  it.each(stores)(
    'when channel, log and allowed IDs are numbers, then $name keeps their exact digits and refuses the numbers that are not IDs',
    async ({ scratch }) => {
      const dir = mkdtempSync(join(tmpdir(), 'chatbridge-original-'));
      writeFileSync(join(dir, 'numbers.json'), RECORD);
      writeFileSync(join(dir, 'tokens.json'), JSON.stringify({ numbers: tokens.community_b }));
      const location = await scratch(dir);

      const result = await chatbridge(location, 'import', '--from-original', dir);
      expect(result.code).toBe(2);
      expect(refusedFields(result.stdout)).toEqual(
        [
          'numbers config.channels.discord[2]', // 1.5
          'numbers config.channels.guilded[2]', // dropped with its row
          'numbers config.channels.discord[3]', // -3
          'numbers config.channels.guilded[3]',
          'numbers config.blacklist[0]', // 42: a blacklist word is a string
        ].sort(),
      );
      expect(result.stdout).toMatch(/refused numbers: config\.channels\.discord\[2\]: must be a string, or an ID .*\(found a number\)/);
      expect(result.stdout).toMatch(/^1 imported, 0 unchanged, 0 endpoints refused, 5 values refused$/m);

      const store = await openStore(
        location.startsWith('postgres')
          ? { kind: 'postgres', databaseUrl: location, poolSize: 1 }
          : { kind: 'sqlite', sqlitePath: location },
      );
      try {
        const { config } = (await store.endpoints.get('numbers'))!.record;
        expect(config.channels.chat_a).toEqual(['123456789012345678901', '912345678901234001']);
        expect(config.channels.chat_b).toEqual(['guilded-chan-0', 'guilded-chan-1']);
        expect(config.logs.chat_a).toBe('912345678901234999');
        expect(config['allowed-ids']).toEqual(['98765432109876543210', '912345678901234567']);
        expect(config.blacklist).toEqual(['spam']);
      } finally {
        await store.close();
      }
    },
  );
});

describe('mapOriginalRecord', () => {
  const schemas = loadSpecSchemas();
  const map = (config: Record<string, unknown>) =>
    mapOriginalRecord(
      { config: { isbeta: false, 'self-user': false, ...config } },
      { allowPrivateWebhooks: false },
      schemas.parameterProblem,
    )!;

  it('when self-user is false, then selfuse is true, and the other way round', () => {
    expect(map({ 'self-user': false }).record.config['self-user']).toBe(true);
    expect(map({ 'self-user': true }).record.config['self-user']).toBe(false);
  });

  it('when a channel repeats in its list, then its whole bridge row is refused so that later rows stay paired', () => {
    const mapped = map({
      channels: {
        discord: ['912345678901234001', '912345678901234001', '912345678901234003'],
        guilded: ['chan-b-0', 'chan-b-1', 'chan-b-2'],
      },
    });
    expect(mapped.record.config.channels.chat_a).toEqual(['912345678901234001', '912345678901234003']);
    expect(mapped.record.config.channels.chat_b).toEqual(['chan-b-0', 'chan-b-2']);
    expect(mapped.refused.map((r) => r.field).sort()).toEqual(['config.channels.discord[1]', 'config.channels.guilded[1]']);
  });

  it('when a list holds more than the update allows, then the elements past the limit are refused', () => {
    const mapped = map({ 'allowed-ids': Array.from({ length: 502 }, (_, i) => `id-${String(i).padStart(5, '0')}`) });
    expect(mapped.record.config['allowed-ids']).toHaveLength(500);
    expect(mapped.refused.map((r) => r.field)).toEqual(['config.allowed-ids[500]', 'config.allowed-ids[501]']);
  });

  it('when something is not an original record, then nothing is mapped', () => {
    expect(mapOriginalRecord([], { allowPrivateWebhooks: false }, schemas.parameterProblem)).toBeUndefined();
  });
});

describe('an export file line with a reserved ID', () => {
  it('when an endpoint line of an export names a reserved ID, then the line is invalid naming it', () => {
    const line = parseBodyLine(JSON.stringify({ type: 'endpoint', id: 'Events' }), loadSpecSchemas());
    expect(line).toMatchObject({ kind: 'invalid', id: 'Events', problem: expect.stringContaining('reserved') });
  });
});
