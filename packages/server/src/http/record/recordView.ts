// Answers that carry a record show it as its reader sees it (domain/messageView.ts): the stored text
// as it is when that is the view (idle, or the newest message is the one shown), else the record
// with the shown message read from the log.
import type { Response } from 'express';
import { shownMessage, shownNumber, viewRecord } from '../../domain/messageView.ts';
import type { EndpointRecord, Platform } from '../../domain/record.ts';
import type { EndpointStore, StoredEndpoint } from '../../store/port.ts';
import { MESSAGE_NUMBER_HEADER } from './messageNumber.ts';

export interface RecordView {
  /** The record's JSON text to send. */
  json: string;
  /** The record, parsed (only when asked for: response validation). */
  record: () => EndpointRecord;
  /** The shown message's number; undefined while idle. */
  number: number | undefined;
  /** json's UTF-8 length, when known. */
  bytes?: number | undefined;
}

export async function viewFor(
  store: Pick<EndpointStore, 'messages'>,
  id: string,
  row: Pick<StoredEndpoint, 'record' | 'recordJson' | 'state'> & { recordJsonBytes?: number | undefined },
  platform?: Platform,
): Promise<RecordView> {
  const shown = shownMessage(row.state, platform);
  const number = shownNumber(row.state, platform);
  if (shown === undefined || shown.n === row.state.seq) {
    return { json: row.recordJson, record: () => row.record, number, bytes: row.recordJsonBytes };
  }
  const logged = await store.messages.get(id, shown.n);
  // Kept while unread, so always there; should it not be, the stored record is still a true answer.
  if (!logged) return { json: row.recordJson, record: () => row.record, number: row.state.seq, bytes: row.recordJsonBytes };
  const record = viewRecord(row.record, logged, shown.u);
  return { json: JSON.stringify(record), record: () => record, number: shown.n };
}

/** Names the shown message in `Chatbridge-Message-Number`; an idle endpoint's answer has none. */
export function setShownNumber(res: Response, view: Pick<RecordView, 'number'>): void {
  if (view.number !== undefined) res.setHeader(MESSAGE_NUMBER_HEADER, String(view.number));
}
