// The pending message's number on every answer that carries a record, so a bot can name the message
// it relayed when it calls markRead (a newer one may have replaced it meanwhile). See the spec's
// Record response.
import type { Response } from 'express';
import type { MessageState } from '../../store/port.ts';

export const MESSAGE_NUMBER_HEADER = 'Chatbridge-Message-Number';

/** Sets the header while a message is pending; an idle endpoint's answer has none. */
export function setMessageNumber(res: Response, state: MessageState): void {
  if (state.pendingSince !== null) res.setHeader(MESSAGE_NUMBER_HEADER, String(state.seq));
}
