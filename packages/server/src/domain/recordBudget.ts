// The stored record's size budget: its JSON text (as stored, sent by getEndpoint and by every event of
// a stream) holds at most RECORD_BUDGET_BYTES bytes of UTF-8. Every list at its maximum, each element
// at its parameter's maximum length in characters that take four bytes each (the most any character
// without a control character takes in JSON), and every other member at its maximum make about
// 1.23 MB; the budget stays above that, so ordinary text never meets it, while a record can no
// longer grow without bound through characters that JSON escapes.

export const RECORD_BUDGET_BYTES = 1_500_000;

/** UTF-8 bytes of `text`; a UTF-16 code unit never takes more than three. */
function utf8Bytes(text: string): number {
  return Buffer.byteLength(text);
}

/**
 * Why the record `nextJson` may not be stored, or undefined when it may. A record over the budget is
 * refused only when it would grow: one stored before the budget existed can still be updated, so long
 * as the update does not make it larger.
 */
export function recordBudgetProblem(nextJson: string, currentJson: string): string | undefined {
  if (nextJson.length * 3 <= RECORD_BUDGET_BYTES) return undefined; // the common case: nothing to count
  const next = utf8Bytes(nextJson);
  if (next <= RECORD_BUDGET_BYTES || next <= utf8Bytes(currentJson)) return undefined;
  return `the record would take ${next} bytes of JSON, over its budget of ${RECORD_BUDGET_BYTES} bytes: nothing was applied; remove list elements or send shorter values`;
}
