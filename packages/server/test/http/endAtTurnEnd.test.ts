// Responses ended together later in the event-loop turn: none before the handlers of the turn have
// run, each with its own body, in the order they were made.
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { endAtTurnEnd } from '../../src/http/transport/endAtTurnEnd.ts';

function fakeResponse(ended: string[], name: string): ServerResponse {
  return { end: (body: string) => void ended.push(`${name}:${body}`) } as unknown as ServerResponse;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('endAtTurnEnd', () => {
  it('when responses are made in one turn, then none ends at once and all end together, in order, each with its own body', async () => {
    const ended: string[] = [];
    endAtTurnEnd(fakeResponse(ended, 'a'), '{"n":1}');
    await Promise.resolve(); // the microtasks of the turn: still nothing sent
    endAtTurnEnd(fakeResponse(ended, 'b'), '{"n":2}');
    endAtTurnEnd(fakeResponse(ended, 'c'), '{"n":3}');
    expect(ended).toEqual([]);
    await nextTurn();
    expect(ended).toEqual(['a:{"n":1}', 'b:{"n":2}', 'c:{"n":3}']);
  });

  it('when a response is made after the others were ended, then it is ended in a later turn, once', async () => {
    const ended: string[] = [];
    endAtTurnEnd(fakeResponse(ended, 'first'), '1');
    await nextTurn();
    endAtTurnEnd(fakeResponse(ended, 'second'), '2');
    expect(ended).toEqual(['first:1']);
    await nextTurn();
    await nextTurn();
    expect(ended).toEqual(['first:1', 'second:2']);
  });
});
