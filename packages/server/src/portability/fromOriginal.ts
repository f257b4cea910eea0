// `chatbridge import --from-original <folder>`: the original service's files (`<id>.json` records and
// `tokens.json`, `{"<id>": "<token>"}`) into a store. Each endpoint keeps its token (only the digest
// is stored); values that an update would refuse are refused one by one and the rest is imported.
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { existingTokenProblem } from '../admin/endpoints.ts';
import type { UpdatePolicy } from '../domain/update.ts';
import type { EndpointSnapshot, EndpointStore } from '../store/port.ts';
import { hashToken } from '../tokens.ts';
import { reservedIdProblem } from '../domain/reservedIds.ts';
import { type FieldRefusal, mapOriginalRecord, parseOriginalJson } from './originalRecord.ts';
import type { SpecSchemas } from './specSchemas.ts';

/** The largest `<id>.json` read (a record at every list's limit is far smaller). */
export const MAX_RECORD_FILE_BYTES = 1024 * 1024;
/** The largest `tokens.json` read (about 400,000 endpoints' tokens). */
export const MAX_TOKENS_FILE_BYTES = 64 * 1024 * 1024;

export const TOKENS_FILE = 'tokens.json';

export interface OriginalReport {
  /** Endpoints written (0 when the import failed as a whole). */
  imported: number;
  /** Endpoints that were already in the store exactly as they would be imported. */
  unchanged: number;
  /** Endpoints not imported at all, and why. */
  refusedEndpoints: { id: string; reason: string }[];
  /** Values of imported endpoints that were left out, and why. */
  refusedValues: { id: string; refusal: FieldRefusal }[];
  /** IDs another process created while the import ran: then nothing was imported. */
  conflicts: string[];
}

export interface ImportOriginalOptions {
  policy: UpdatePolicy;
  schemas: SpecSchemas;
  /** Told of each refusal as it is found (the report lists them all at the end too). */
  onRefusal?: (id: string, what: string, reason: string) => void;
}

const sameSnapshot = (
  a: EndpointSnapshot,
  b: { tokenHash: Uint8Array; recordJson: string; state: { seq: number; pendingSince: number | null }; version: number },
) =>
  Buffer.from(a.tokenHash).equals(Buffer.from(b.tokenHash)) &&
  a.recordJson === b.recordJson &&
  a.state.seq === b.state.seq &&
  a.state.pendingSince === b.state.pendingSince &&
  a.version === b.version;

/** The folder is not in the original's layout: nothing is imported. */
export class OriginalLayoutError extends Error {}

/** Throws OriginalLayoutError (nothing imported) when the folder's tokens.json cannot be read. */
async function readTokens(folder: string): Promise<Record<string, unknown>> {
  const path = join(folder, TOKENS_FILE);
  const size = await stat(path).then(
    (s) => s.size,
    () => undefined,
  );
  if (size === undefined) throw new OriginalLayoutError(`${path} is missing: the original service keeps every endpoint's token there`);
  if (size > MAX_TOKENS_FILE_BYTES) throw new OriginalLayoutError(`${path} is larger than ${MAX_TOKENS_FILE_BYTES} bytes`);
  let tokens: unknown;
  try {
    tokens = JSON.parse(await readFile(path, 'utf8'));
  } catch {
    throw new OriginalLayoutError(`${path} is not JSON`);
  }
  if (typeof tokens !== 'object' || tokens === null || Array.isArray(tokens))
    throw new OriginalLayoutError(`${path} must be an object {"<id>": "<token>"}`);
  return tokens as Record<string, unknown>;
}

export async function importFromOriginal(store: EndpointStore, folder: string, options: ImportOriginalOptions): Promise<OriginalReport> {
  const tokens = await readTokens(folder);
  const files = (await readdir(folder, { withFileTypes: true }))
    .filter((e) => e.isFile() && e.name.endsWith('.json') && e.name !== TOKENS_FILE)
    .map((e) => e.name)
    .sort();
  const report: OriginalReport = { imported: 0, unchanged: 0, refusedEndpoints: [], refusedValues: [], conflicts: [] };
  const refuseEndpoint = (id: string, reason: string) => {
    report.refusedEndpoints.push({ id, reason });
    options.onRefusal?.(id, 'the endpoint', reason);
  };
  const withRecord = new Set(files.map((f) => f.slice(0, -'.json'.length)));
  for (const id of Object.keys(tokens)) {
    if (!withRecord.has(id)) refuseEndpoint(id, `${TOKENS_FILE} has its token, but there is no ${id}.json`);
  }

  async function* endpoints(): AsyncGenerator<EndpointSnapshot> {
    for (const file of files) {
      const id = file.slice(0, -'.json'.length);
      const snapshot = await readEndpoint(id, file);
      if (!snapshot) continue;
      const existing = await store.endpoints.get(id);
      if (existing && sameSnapshot(snapshot, existing)) report.unchanged++;
      else if (existing) refuseEndpoint(id, 'an endpoint with this ID exists in the store with other content; it was left as it is');
      else yield snapshot;
    }
  }

  async function readEndpoint(id: string, file: string): Promise<EndpointSnapshot | undefined> {
    const idProblem = options.schemas.parameterProblem('endpoint', id);
    if (idProblem) return void refuseEndpoint(id, `not a valid endpoint ID (1 to 64 characters of A-Z a-z 0-9 _ -): ${idProblem}`);
    const reserved = reservedIdProblem(id);
    if (reserved) return void refuseEndpoint(id, `not a valid endpoint ID: ${reserved}`);
    const token = tokens[id];
    if (token === undefined) return void refuseEndpoint(id, `${TOKENS_FILE} has no token for it`);
    if (typeof token !== 'string') return void refuseEndpoint(id, `its token in ${TOKENS_FILE} is not a string`);
    const tokenProblem = existingTokenProblem(token);
    if (tokenProblem) return void refuseEndpoint(id, `its token ${tokenProblem}`);
    const path = join(folder, file);
    if ((await stat(path)).size > MAX_RECORD_FILE_BYTES)
      return void refuseEndpoint(id, `${file} is larger than ${MAX_RECORD_FILE_BYTES} bytes`);
    let raw: unknown;
    try {
      raw = parseOriginalJson(await readFile(path, 'utf8'));
    } catch {
      return void refuseEndpoint(id, `${file} is not JSON`);
    }
    const mapped = mapOriginalRecord(raw, options.policy, options.schemas.parameterProblem);
    if (!mapped) return void refuseEndpoint(id, `${file} is not an endpoint record (no config object)`);
    for (const refusal of mapped.refused) {
      report.refusedValues.push({ id, refusal });
      options.onRefusal?.(id, refusal.field, refusal.reason);
    }
    return {
      id,
      tokenHash: hashToken(token),
      recordJson: mapped.recordJson,
      state: { seq: 0, pendingSince: null, queue: [] },
      version: 0,
      lastChange: 'record',
      deliveries: [],
      messages: [],
    };
  }

  const outcome = await store.snapshot.importRows(endpoints());
  report.conflicts = outcome.conflicts;
  report.imported = outcome.imported;
  return report;
}
