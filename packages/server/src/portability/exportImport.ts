// `chatbridge export` and `chatbridge import <file>`: the whole store as an export file, and an
// export file into a store, all of it or nothing.
import { MAX_BOTS } from '../admin/bots.ts';
import type { EndpointSnapshot, EndpointStore, StoredBot } from '../store/port.ts';
import {
  COUNT_FIELD,
  LINE_KINDS,
  type LineKind,
  MAX_LINE_BYTES,
  botLine,
  endLine,
  endpointLine,
  headerLine,
  parseBodyLine,
  parseHeader,
} from './exportFormat.ts';
import { readLines } from './lines.ts';
import type { TextSink } from './output.ts';
import type { SpecSchemas } from './specSchemas.ts';

/** Writes every endpoint and bot of `store`; returns how many of each. */
export async function exportStore(store: EndpointStore, sink: TextSink, now: Date): Promise<Record<LineKind, number>> {
  const counts: Record<LineKind, number> = { endpoint: 0, bot: 0 };
  try {
    await sink.write(`${headerLine(store.snapshot.source, now)}\n`);
    for await (const row of store.snapshot.exportRows()) {
      await sink.write(`${endpointLine(row)}\n`);
      counts.endpoint++;
    }
    for (const bot of await store.bots.list()) {
      await sink.write(`${botLine(bot)}\n`);
      counts.bot++;
    }
    await sink.write(`${endLine(counts)}\n`);
    await sink.finish();
  } catch (error) {
    await sink.abandon();
    throw error;
  }
  return counts;
}

export interface FileIssue {
  line: number;
  id?: string;
  problem: string;
}

/** Issues kept to print; past this many only their number is told. */
export const MAX_ISSUES_LISTED = 1000;

export type ImportReport =
  | { ok: true; imported: number; unchanged: number; bots?: { imported: number; unchanged: number } }
  | { ok: false; issues: FileIssue[]; moreIssues: number; conflicts: string[]; botConflicts: string[] };

/**
 * Checks the whole file first (format, version, every line, unique IDs, the end line and its count),
 * then reads it again into the store's one import transaction. A file with any problem writes nothing.
 */
export async function importFile(store: EndpointStore, path: string, schemas: SpecSchemas): Promise<ImportReport> {
  const issues: FileIssue[] = [];
  let moreIssues = 0;
  const report = (issue: FileIssue) => (issues.length < MAX_ISSUES_LISTED ? issues.push(issue) : moreIssues++);
  const failed = (): ImportReport => ({ ok: false, issues, moreIssues, conflicts: [], botConflicts: [] });
  const seen = new Set<string>();
  const bots: StoredBot[] = [];
  const botKeys = new Set<string>();
  let version = 0;
  let kinds: readonly LineKind[] = [];
  const counts: Record<LineKind, number> = { endpoint: 0, bot: 0 };
  let lastKind = -1;
  let ended: { line: number; counts: Partial<Record<LineKind, number>> } | undefined;
  let lastLine = 0;
  for await (const line of readLines(path, MAX_LINE_BYTES)) {
    lastLine = line.number;
    if ('problem' in line) {
      report({ line: line.number, problem: line.problem });
      continue;
    }
    if (line.number === 1) {
      const header = parseHeader(line.text);
      if (!header.ok) return { ok: false, issues: [{ line: 1, problem: header.problem }], moreIssues: 0, conflicts: [], botConflicts: [] };
      version = header.version;
      kinds = LINE_KINDS[version]!;
      continue;
    }
    if (ended) {
      report({ line: line.number, problem: `after the end line (line ${ended.line})` });
      continue;
    }
    const parsed = parseBodyLine(line.text, schemas, version);
    if (parsed.kind === 'end') ended = { line: line.number, counts: parsed.counts };
    else if (parsed.kind === 'invalid')
      report({ line: line.number, ...(parsed.id !== undefined && { id: parsed.id }), problem: parsed.problem });
    else if (parsed.kind === 'endpoint' || parsed.kind === 'bot') {
      counts[parsed.kind]++;
      const at = kinds.indexOf(parsed.kind);
      if (at < lastKind)
        report({
          line: line.number,
          problem: `this ${parsed.kind} line comes after the ${kinds[lastKind]} lines: each kind has its place`,
        });
      lastKind = Math.max(lastKind, at);
      if (parsed.kind === 'endpoint') {
        if (seen.has(parsed.snapshot.id)) report({ line: line.number, id: parsed.snapshot.id, problem: 'this ID came before in the file' });
        seen.add(parsed.snapshot.id);
      } else {
        const key = Buffer.from(parsed.bot.keyHash).toString('hex');
        if (bots.some((b) => b.id === parsed.bot.id))
          report({ line: line.number, problem: `bot ${parsed.bot.id}: this ID came before in the file` });
        else if (botKeys.has(key))
          report({ line: line.number, problem: `bot ${parsed.bot.id}: another bot in the file has the same key digest` });
        else if (bots.length >= MAX_BOTS) report({ line: line.number, problem: `bot ${parsed.bot.id}: more than ${MAX_BOTS} bots` });
        else {
          bots.push(parsed.bot);
          botKeys.add(key);
        }
      }
    }
  }
  if (lastLine === 0) report({ line: 1, problem: 'the file is empty' });
  else if (!ended) report({ line: lastLine, problem: 'the file ends without its end line: it was cut short' });
  else
    for (const kind of kinds) {
      if (ended.counts[kind] !== counts[kind])
        report({
          line: ended.line,
          problem: `the end line counts ${ended.counts[kind]} ${COUNT_FIELD[kind]}, the file holds ${counts[kind]}`,
        });
    }
  if (issues.length > 0) return failed();

  // Bots are few (MAX_BOTS) and kept in memory; endpoints are read from the file again, a line at a time.
  const outcome = await store.snapshot.importRows(snapshotsOf(path, schemas, version), kinds.includes('bot') ? bots : undefined);
  const botConflicts = outcome.bots?.conflicts ?? [];
  if (outcome.conflicts.length > 0 || botConflicts.length > 0)
    return { ok: false, issues: [], moreIssues: 0, conflicts: outcome.conflicts, botConflicts };
  return {
    ok: true,
    imported: outcome.imported,
    unchanged: outcome.unchanged,
    ...(outcome.bots && { bots: { imported: outcome.bots.imported, unchanged: outcome.bots.unchanged } }),
  };
}

/** The file's endpoints, read again; a line that no longer checks (the file changed) ends the import. */
async function* snapshotsOf(path: string, schemas: SpecSchemas, version: number): AsyncGenerator<EndpointSnapshot> {
  for await (const line of readLines(path, MAX_LINE_BYTES)) {
    if (line.number === 1) continue;
    const parsed = 'problem' in line ? undefined : parseBodyLine(line.text, schemas, version);
    if (parsed?.kind === 'end') return;
    if (parsed?.kind === 'bot') continue; // checked and held by the first reading
    if (parsed?.kind !== 'endpoint') throw new Error(`line ${line.number} changed since it was checked; nothing was imported`);
    yield parsed.snapshot;
  }
}
