import { describe, expect, it } from 'vitest';
import { messageIdFromAnswer } from '../../src/delivery/messageId.ts';
import { isMessageId } from '../../src/domain/messageIds.ts';

describe('isMessageId', () => {
  it('when a value is 1-100 printable ASCII characters without spaces, then it is a message ID; otherwise not', () => {
    for (const id of ['a', 'a-1', '123456789012345678', '!~', 'x'.repeat(100)]) expect(isMessageId(id)).toBe(true);
    for (const id of ['', ' ', 'a b', 'x'.repeat(101), 'é', 'a\n', 42, null, undefined]) expect(isMessageId(id)).toBe(false);
  });
});

describe('messageIdFromAnswer', () => {
  it('when the answer has a string id, then that is the ID', () => {
    expect(messageIdFromAnswer('{"id":"a-1","content":"hi"}')).toBe('a-1');
    expect(messageIdFromAnswer(`{"id":"${'x'.repeat(100)}"}`)).toBe('x'.repeat(100));
  });

  it('when the id is a JSON integer, then the ID is its digits exactly as written, also beyond 2^53', () => {
    expect(messageIdFromAnswer('{"id":42}')).toBe('42');
    expect(messageIdFromAnswer('{"id":0}')).toBe('0');
    expect(messageIdFromAnswer('{"id": 9007199254740993}')).toBe('9007199254740993'); // a double reads 9007199254740992
    expect(messageIdFromAnswer('{"id":1234567890123456789012345678901234567890}')).toBe('1234567890123456789012345678901234567890');
  });

  it('when the id is not a usable ID, then there is none', () => {
    for (const text of [
      `{"id":"${'x'.repeat(101)}"}`,
      '{"id":"a b"}',
      '{"id":""}',
      '{"id":-5}',
      '{"id":1.5}',
      '{"id":1e3}',
      '{"id":10.0}',
      `{"id":${'9'.repeat(101)}}`,
      '{"id":true}',
      '{"id":null}',
      '{"id":{"value":"a-1"}}',
      '{"id":["a-1"]}',
    ]) {
      expect(messageIdFromAnswer(text), text).toBeUndefined();
    }
  });

  it('when the answer is not a JSON object with an id, then there is none', () => {
    for (const text of ['', 'ok', '{"id":"a-1"', '["a-1"]', '"a-1"', '42', 'null', '{"message":{"id":"a-1"}}', '{}']) {
      expect(messageIdFromAnswer(text), text).toBeUndefined();
    }
  });

  it('when the id is given twice, then the last one counts, as JSON.parse reads it', () => {
    expect(messageIdFromAnswer('{"id":"first","id":"second"}')).toBe('second');
  });
});
