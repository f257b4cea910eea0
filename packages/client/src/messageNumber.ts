// The pending message's number (the `Chatbridge-Message-Number` header), remembered for each record
// the client returns, so a bot can name the message it relayed when it calls markRead without the
// record methods returning anything but the record.
import type { EndpointRecord } from './types.ts';

const numbers = new WeakMap<EndpointRecord, number>();

/** Remembers the header of the response `record` came from (none: the endpoint was idle). */
export function rememberMessageNumber(record: EndpointRecord, response: Response): EndpointRecord {
  const header = response.headers.get('Chatbridge-Message-Number');
  if (header !== null && /^[1-9][0-9]*$/.test(header)) numbers.set(record, Number(header));
  return record;
}

/**
 * The number of the message pending in `record`, as the answer that carried it said; undefined when
 * the endpoint was idle, or for a record this client did not return (one from the event stream).
 * Pass it to `markRead` as `messageNumber`.
 */
export function messageNumberOf(record: EndpointRecord): number | undefined {
  return numbers.get(record);
}
