// Where an event stream resumes. Both stream kinds read the client's last event ID the same way
// (the `Last-Event-ID` header, else the `last_event_id` query parameter); what an ID means is the
// kind's own (endpointEvents.ts, allChangesStream.ts), given here as the pattern of its IDs.

/**
 * Where a stream starts: `fresh` (the current record first), `after` a version (or position) the
 * client has, or `unknown` (a Last-Event-ID this stream never issued: answered with a reset).
 */
export type ResumePoint = { kind: 'fresh' } | { kind: 'after'; version: number } | { kind: 'unknown' };

/**
 * The resume point in `header` or `query`, where `ids` matches the kind's event IDs and captures the
 * number the stream resumes after. The header wins over the query parameter: an EventSource that
 * reconnects by itself keeps its URL (with the old query value) and sends its newest ID as the header.
 */
export function resumeFrom(ids: RegExp, header: string | string[] | undefined, query: string | undefined): ResumePoint {
  const value = (Array.isArray(header) ? header.join(',') : header?.trim()) || query;
  if (!value) return { kind: 'fresh' };
  const version = Number(ids.exec(value)?.[1]);
  return Number.isSafeInteger(version) ? { kind: 'after', version } : { kind: 'unknown' };
}
