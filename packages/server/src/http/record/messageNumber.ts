// The pending message's number on every answer that carries a record, so a bot can name the message
// it relayed when it calls markRead (a newer one may have replaced it meanwhile). See the spec's
// Record response; respond.ts writes the header.
import type { MessageState } from '../../store/port.ts';

export const MESSAGE_NUMBER_HEADER = 'Chatbridge-Message-Number';

/** The pending message's number; undefined while the endpoint is idle (its answer has no header). */
export const pendingNumber = (state: MessageState): number | undefined => (state.pendingSince === null ? undefined : state.seq);
