// The events of an endpoint's stream (streamEndpointEvents) as they go on the wire: their IDs, what
// an ID a client sends back means, and each event's bytes, formatted once for every stream that
// sends the same row.
import type { Platform } from '../domain/record.ts';
import { hidesWebhooks, redactedJsonFor } from '../domain/redaction.ts';
import type { StoredEndpoint } from '../store/port.ts';
import { messageNumberOf } from '../store/changes.ts';
import { type ResumePoint, resumeFrom } from './resume.ts';

/** `edit` and `delete` carry a logged message's change (their data is no record). */
export type EventType = 'record' | 'reset' | 'edit' | 'delete';

/**
 * An event's ID: the record's version, and while a message is pending `-` and its number
 * (`12-5`). The ID is the one field beside `type` and `data` that an EventSource (and every SSE
 * library) hands its caller, and `data` must stay the bare record, so the number travels here. Not
 * `.`: a reader taking the ID for a number would get 12.5, a plausible wrong version; `12-5` is no
 * number at all. A client resuming sends the ID back; only its version counts (resumePoint).
 */
export function eventId(version: number, messageNumber: number | null): string {
  return messageNumber === null ? String(version) : `${version}-${messageNumber}`;
}

// Leading zeros are allowed, as the query parameters allow them: "04" is 4 either way.
/** An event ID (eventId): the version, then the message number if any. */
const EVENT_ID = /^([0-9]{1,32})(?:-[0-9]{1,32})?$/;

/**
 * Where an endpoint's stream resumes: after the version of the event ID in `Last-Event-ID` (or the
 * `last_event_id` query parameter, of the same form; the header wins, see resume.ts).
 */
export function resumePoint(header: string | string[] | undefined, query: string | undefined): ResumePoint {
  return resumeFrom(EVENT_ID, header, query);
}

/**
 * One event: `id`, `event` and `data` lines, then the empty line that ends it. The record is its
 * JSON text as JSON.stringify wrote it (as a string or as UTF-8 bytes), which escapes line breaks
 * inside strings: it always fits one data line. As bytes, so that what a stream has queued is
 * counted in bytes (see slowStreams.ts).
 */
export function formatEvent(version: number, type: EventType, recordJson: string | Uint8Array, messageNumber: number | null): Buffer {
  const head = `id: ${eventId(version, messageNumber)}\nevent: ${type}\ndata: `;
  if (typeof recordJson === 'string') return Buffer.from(`${head}${recordJson}\n\n`);
  return Buffer.concat([Buffer.from(head), recordJson, EVENT_END]);
}

const EVENT_END = Buffer.from('\n\n');

/**
 * A row's record event, formatted once for every stream that sends it. The SQLite adapter hands the
 * streams of an endpoint the same row object (its row cache), so both streams of a bridged community
 * write the same bytes; a row read anew (PostgreSQL) is formatted by the stream that read it. A row
 * past LARGE_ROW_CHARS is formatted by each stream, in its turn, and not kept: formatting the
 * largest records for twenty streams at once would hold the event loop as twenty reads of the log
 * would, and the cache would hold a second copy of them for as long as the row is cached.
 */
const formattedRows = new WeakMap<StoredEndpoint, Buffer>();
const LARGE_ROW_CHARS = 64 * 1024;

function rowEvent(row: StoredEndpoint): Buffer {
  const kept = formattedRows.get(row);
  if (kept) return kept;
  const bytes = formatEvent(row.version, 'record', row.recordJson, messageNumberOf(row.state));
  if (!isLarge(row)) formattedRows.set(row, bytes);
  return bytes;
}

/** Whether the row's event is formatted by each stream in its turn (see rowEvent). */
export const isLarge = (row: StoredEndpoint) => row.recordJson.length > LARGE_ROW_CHARS;

/**
 * The row's record event as a `platform` bot key sees it (other platforms' webhook URLs hidden, see
 * domain/redaction.ts): the shared bytes when nothing is hidden, else formatted once per row and
 * platform, as rowEvent is per row, for every bot stream of that platform.
 */
const redactedRows = new WeakMap<StoredEndpoint, Partial<Record<Platform, Buffer>>>();

export function rowEventFor(row: StoredEndpoint, platform: Platform | undefined): Buffer {
  if (platform === undefined || !hidesWebhooks(row.record, platform)) return rowEvent(row);
  let kept = redactedRows.get(row);
  const cached = kept?.[platform];
  if (cached) return cached;
  const bytes = formatEvent(row.version, 'record', redactedJsonFor(row.record, row.recordJson, platform), messageNumberOf(row.state));
  if (!isLarge(row)) {
    if (!kept) redactedRows.set(row, (kept = {}));
    kept[platform] = bytes;
  }
  return bytes;
}

/** The record's text as a `platform` bot key may see it (other platforms' webhooks hidden); all of it for any other credential. */
export function recordSeenBy(from: { record: StoredEndpoint['record']; recordJson: string }, platform: Platform | undefined): string {
  return platform === undefined ? from.recordJson : redactedJsonFor(from.record, from.recordJson, platform);
}
