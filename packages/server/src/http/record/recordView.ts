// Answers that carry a record show it as its reader sees it (domain/messageView.ts): the stored text
// as it is when that is the view (idle, or the newest message is the one shown), else the record
// with the shown message read from the log.
import { shownMessage, shownNumber, viewRecord } from '../../domain/messageView.ts';
import type { EndpointRecord, Platform } from '../../domain/record.ts';
import type { EndpointStore, StoredEndpoint } from '../../store/port.ts';
import type { JsonText } from '../respond.ts';

/** The record's JSON text to send, and the shown message's number (undefined while idle). */
export interface RecordView extends JsonText<EndpointRecord> {
  number: number | undefined;
}

/** The record as a reader of `platform` (none: the token's or admin's view) is shown it. */
export async function shownRecord(
  store: Pick<EndpointStore, 'messages'>,
  id: string,
  row: Pick<StoredEndpoint, 'record' | 'recordJson' | 'state'> & { recordJsonBytes?: number | undefined },
  platform?: Platform,
): Promise<RecordView> {
  const shown = shownMessage(row.state, platform);
  const number = shownNumber(row.state, platform);
  if (shown === undefined || shown.n === row.state.seq) {
    return { json: row.recordJson, parsed: () => row.record, number, bytes: row.recordJsonBytes };
  }
  const logged = await store.messages.get(id, shown.n);
  // Kept while unread, so always there; should it not be, the stored record is still a true answer.
  if (!logged) return { json: row.recordJson, parsed: () => row.record, number: row.state.seq, bytes: row.recordJsonBytes };
  const record = viewRecord(row.record, logged, shown.u);
  return { json: JSON.stringify(record), parsed: () => record, number: shown.n };
}
