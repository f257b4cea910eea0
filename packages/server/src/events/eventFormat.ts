// The bytes of an event stream: events, heartbeats, and the size past which an event is paced.

export type EventType = 'record' | 'reset';

/**
 * One event: `id`, `event`, `messageNumber` and `data` lines, then the empty line that ends it.
 * `messageNumber` (the pending message's number as of this version, `null` when idle) is a field of
 * its own rather than part of `data`, so `data` stays the bare record existing clients parse: SSE
 * clients ignore a field they do not know (an EventSource does), and ours reads it. The record is its JSON
 * text as JSON.stringify wrote it (as a string or as UTF-8 bytes), which escapes line breaks inside
 * strings: it always fits one data line. As bytes, so that what a stream has queued is counted in bytes
 * (see slowStreams.ts).
 */
export function formatEvent(version: number, type: EventType, recordJson: string | Uint8Array, messageNumber: number | null): Buffer {
  const head = `id: ${version}\nevent: ${type}\nmessageNumber: ${messageNumber}\ndata: `;
  if (typeof recordJson === 'string') return Buffer.from(`${head}${recordJson}\n\n`);
  return Buffer.concat([Buffer.from(head), recordJson, EVENT_END]);
}

const EVENT_END = Buffer.from('\n\n');

export const HEARTBEAT = ': heartbeat\n\n';

/**
 * An event larger than this is written in its turn (turns.ts): the streams of one endpoint share its
 * bytes and are handed them together, and writing the largest records to twenty sockets at once
 * would hold the event loop as twenty reads would.
 */
export const PACED_EVENT_BYTES = 64 * 1024;
