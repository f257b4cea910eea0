// `chatbridge export` and `chatbridge import <file>`: the whole store as an export file, and an
// export file into a store, all of it or nothing.
import type { EndpointSnapshot, EndpointStore } from '../store/port.ts';
import { MAX_LINE_BYTES, endLine, endpointLine, headerLine, parseBodyLine, parseHeader } from './exportFormat.ts';
import { readLines } from './lines.ts';
import type { TextSink } from './output.ts';
import type { SpecSchemas } from './specSchemas.ts';

/** Writes every endpoint of `store`; returns how many. */
export async function exportStore(store: EndpointStore, sink: TextSink, now: Date): Promise<number> {
  let count = 0;
  try {
    await sink.write(`${headerLine(store.kind, now)}\n`);
    for await (const row of store.exportRows()) {
      await sink.write(`${endpointLine(row)}\n`);
      count++;
    }
    await sink.write(`${endLine(count)}\n`);
    await sink.finish();
  } catch (error) {
    await sink.abandon();
    throw error;
  }
  return count;
}

export interface FileIssue {
  line: number;
  id?: string;
  problem: string;
}

/** Issues kept to print; past this many only their number is told. */
export const MAX_ISSUES_LISTED = 1000;

export type ImportReport =
  | { ok: true; imported: number; unchanged: number }
  | { ok: false; issues: FileIssue[]; moreIssues: number; conflicts: string[] };

/**
 * Checks the whole file first (format, version, every line, unique IDs, the end line and its count),
 * then reads it again into the store's one import transaction. A file with any problem writes nothing.
 */
export async function importFile(store: EndpointStore, path: string, schemas: SpecSchemas): Promise<ImportReport> {
  const issues: FileIssue[] = [];
  let moreIssues = 0;
  const report = (issue: FileIssue) => (issues.length < MAX_ISSUES_LISTED ? issues.push(issue) : moreIssues++);
  const seen = new Set<string>();
  let endpoints = 0;
  let ended: { line: number; count: number } | undefined;
  let lastLine = 0;
  for await (const line of readLines(path, MAX_LINE_BYTES)) {
    lastLine = line.number;
    if ('problem' in line) {
      report({ line: line.number, problem: line.problem });
      continue;
    }
    if (line.number === 1) {
      const header = parseHeader(line.text);
      if (!header.ok) return { ok: false, issues: [{ line: 1, problem: header.problem }], moreIssues: 0, conflicts: [] };
      continue;
    }
    if (ended) {
      report({ line: line.number, problem: `after the end line (line ${ended.line})` });
      continue;
    }
    const parsed = parseBodyLine(line.text, schemas);
    if (parsed.kind === 'end') ended = { line: line.number, count: parsed.endpoints };
    else if (parsed.kind === 'invalid')
      report({ line: line.number, ...(parsed.id !== undefined && { id: parsed.id }), problem: parsed.problem });
    else if (parsed.kind === 'endpoint') {
      endpoints++;
      if (seen.has(parsed.snapshot.id)) report({ line: line.number, id: parsed.snapshot.id, problem: 'this ID came before in the file' });
      seen.add(parsed.snapshot.id);
    }
  }
  if (lastLine === 0) report({ line: 1, problem: 'the file is empty' });
  else if (!ended) report({ line: lastLine, problem: 'the file ends without its end line: it was cut short' });
  else if (ended.count !== endpoints)
    report({ line: ended.line, problem: `the end line counts ${ended.count} endpoints, the file holds ${endpoints}` });
  if (issues.length > 0) return { ok: false, issues, moreIssues, conflicts: [] };

  const outcome = await store.importRows(snapshotsOf(path, schemas));
  if (outcome.conflicts.length > 0) return { ok: false, issues: [], moreIssues: 0, conflicts: outcome.conflicts };
  return { ok: true, imported: outcome.imported, unchanged: outcome.unchanged };
}

/** The file's endpoints, read again; a line that no longer checks (the file changed) ends the import. */
async function* snapshotsOf(path: string, schemas: SpecSchemas): AsyncGenerator<EndpointSnapshot> {
  for await (const line of readLines(path, MAX_LINE_BYTES)) {
    if (line.number === 1) continue;
    const parsed = 'problem' in line ? undefined : parseBodyLine(line.text, schemas);
    if (parsed?.kind === 'end') return;
    if (parsed?.kind !== 'endpoint') throw new Error(`line ${line.number} changed since it was checked; nothing was imported`);
    yield parsed.snapshot;
  }
}
