// Responses ended together, once the event loop has handled every request it read in this turn,
// instead of one by one as each is handled. On loopback the socket write that ends a response also
// wakes the client's process; written one by one, each response found the client asleep again and
// paid that wake-up, which on a small machine is most of what a GET costs in system time. Written
// back to back, the client is woken once per turn.
// Buys: SQLite GET −40% CPU, +67-73% requests/s, p99 −17-33% (BENCHMARKS.md, 7127079).
//
// Only for responses made while the loop handles I/O (a GET answered from SQLite's row cache):
// setImmediate runs them later in the same turn. On PostgreSQL a turn's GETs are answered together by
// the batched read's callback, already back to back, so deferring them only adds work. An update's
// response is made after its group commit, which already runs in setImmediate and ends all of its
// batch's responses back to back; deferring those would hold them a whole turn more.
import type { ServerResponse } from 'node:http';

const waiting: { res: ServerResponse; body: string }[] = [];

function endWaiting(): void {
  // Responses queued while these are ended (none: ending runs no handler) would wait for the next turn.
  const ending = waiting.splice(0);
  for (const { res, body } of ending) res.end(body);
}

/** Ends `res` with `body` later in this event-loop turn, with the others of the turn. */
export function endAtTurnEnd(res: ServerResponse, body: string): void {
  if (waiting.length === 0) setImmediate(endWaiting);
  waiting.push({ res, body });
}
