// Message IDs on chat platforms, as the service handles them: the ID of a webhook's copy of a message
// (learned from the webhook's answer to a create, used in the path of its edit and delete) and the ID a
// native reply refers to. Pure: no I/O.
//
// Decisions:
// - An ID is 1 to 100 printable ASCII characters without spaces, the pattern the API states for every
//   `message_id`: it goes into a URL path and a JSON body as it is, and is compared byte for byte.
// - From a create's answer, the ID is the `id` member of the top-level JSON object:
//     a string → kept when it fits the pattern, else no ID (a longer or odd value is not one the API
//           could report or look up);
//     a number → its text exactly as the answer wrote it, when that text is a non-negative integer
//           (digits only, no sign, fraction or exponent) of at most 100 digits. Chat platforms hand out
//           64-bit IDs; read through a double, an ID above 2^53 would name a different message, so the
//           digits come from the source text (JSON.parse's reviver context), never from the number.
//           A negative or fractional number is not an ID any platform hands out; no ID then;
//     anything else, or a body that is not JSON → no ID.

import { isMessageId } from '../domain/messageIds.ts';

const DIGITS = /^\d+$/;

/** A JSON number as the parser saw it: its source text, so no digit is lost to a double. */
class JsonNumber {
  readonly source: string;
  constructor(source: string) {
    this.source = source;
  }
}

/** The reviver's third argument (Node 24: the source text of a primitive value). */
interface ReviverContext {
  source?: string;
}

function keepNumberSource(_key: string, value: unknown, context?: ReviverContext): unknown {
  if (typeof value !== 'number') return value;
  return new JsonNumber(context?.source ?? String(value));
}

/**
 * The created message's ID from a webhook's answer body (the text of a `wait=true` create's answer),
 * or undefined when the answer names none that is usable. See the decisions at the top of this file.
 */
export function messageIdFromAnswer(text: string): string | undefined {
  let root: unknown;
  try {
    root = JSON.parse(text, keepNumberSource);
  } catch {
    return undefined;
  }
  if (typeof root !== 'object' || root === null || Array.isArray(root) || !Object.hasOwn(root, 'id')) return undefined;
  const id: unknown = (root as Record<string, unknown>).id;
  if (typeof id === 'string') return isMessageId(id) ? id : undefined;
  if (id instanceof JsonNumber) return DIGITS.test(id.source) && isMessageId(id.source) ? id.source : undefined;
  return undefined;
}
