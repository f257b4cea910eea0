// Answers that carry a record show it as its reader sees it (domain/messageView.ts): the stored text
// as it is when that is the view (idle, or the newest message is the one shown), else the record
// with the shown message read from the log. A native reply shown names its target's copies as the
// log knows them now (replyIds.ts).
import { shownMessage, shownNumber, viewRecord } from '../../domain/messageView.ts';
import type { EndpointRecord, Message, Platform } from '../../domain/record.ts';
import type { EndpointStore, StoredEndpoint } from '../../store/port.ts';
import type { JsonText } from '../respond.ts';
import { withCurrentReply } from './replyIds.ts';

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
    // Only a native reply's record has a "number" member (its reply's): the others go as stored, unparsed.
    if (shown === undefined || !row.recordJson.includes('"number":')) {
      return { json: row.recordJson, parsed: () => row.record, number, bytes: row.recordJsonBytes };
    }
    return withMessage(row.record, await withCurrentReply(store, id, row.record.meta.message), number);
  }
  const logged = await store.messages.get(id, shown.n);
  // Kept while unread, so always there; should it not be, the stored record is still a true answer.
  if (!logged) return { json: row.recordJson, parsed: () => row.record, number: row.state.seq, bytes: row.recordJsonBytes };
  const record = viewRecord(row.record, logged, shown.u);
  return withMessage(record, await withCurrentReply(store, id, record.meta.message), shown.n);
}

function withMessage(record: EndpointRecord, message: Message, number: number | undefined): RecordView {
  const shown = message === record.meta.message ? record : { ...record, meta: { ...record.meta, message } };
  return { json: JSON.stringify(shown), parsed: () => shown, number };
}
