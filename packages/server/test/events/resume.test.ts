// Where each kind of stream resumes: the client's last event ID (the Last-Event-ID header, else the
// last_event_id query parameter) read as the kind's IDs, an endpoint's version or a position.
import { describe, expect, it } from 'vitest';
import { resumeAtPosition } from '../../src/events/allChangesStream.ts';
import { resumePoint } from '../../src/events/endpointEvents.ts';

describe('resumePoint', () => {
  it('when neither header nor query is given, then the stream starts fresh', () => {
    expect(resumePoint(undefined, undefined)).toEqual({ kind: 'fresh' });
    expect(resumePoint('', undefined)).toEqual({ kind: 'fresh' });
    expect(resumePoint('  ', undefined)).toEqual({ kind: 'fresh' });
  });

  it('when the header is a version, then it wins over the query', () => {
    expect(resumePoint('41', undefined)).toEqual({ kind: 'after', version: 41 });
    expect(resumePoint('0', '7')).toEqual({ kind: 'after', version: 0 });
    expect(resumePoint(undefined, '7')).toEqual({ kind: 'after', version: 7 });
  });

  it('when the ID carries a message number, then the stream resumes after its version, the number aside', () => {
    expect(resumePoint('41-7', undefined)).toEqual({ kind: 'after', version: 41 });
    expect(resumePoint(undefined, '41-7')).toEqual({ kind: 'after', version: 41 });
    expect(resumePoint('5-2', '41-7')).toEqual({ kind: 'after', version: 5 });
  });

  it('when the header has leading zeros, then it is the same version as the query parameter would be', () => {
    expect(resumePoint('04', undefined)).toEqual({ kind: 'after', version: 4 });
    expect(resumePoint('000', '9')).toEqual({ kind: 'after', version: 0 });
  });

  it.each(['abc', '-1', '1.5', '+1', ' 1 2', '1e3', '99999999999999999', '1,2', '1-', '1-2-3', '-', '1--2', '1-x'])(
    'when the header is %j, then it is no event ID of the stream: reset',
    (header) => {
      expect(resumePoint(header, '3')).toEqual({ kind: 'unknown' });
    },
  );

  it('when the header was sent twice, then it is no version', () => {
    expect(resumePoint(['1', '2'], undefined)).toEqual({ kind: 'unknown' });
  });
});

describe('resumeAtPosition', () => {
  it('when the header or query is a position, then the stream of all changes resumes after it, the header first', () => {
    expect(resumeAtPosition(undefined, undefined)).toEqual({ kind: 'fresh' });
    expect(resumeAtPosition('1041', 7)).toEqual({ kind: 'after', version: 1041 });
    expect(resumeAtPosition(undefined, 0)).toEqual({ kind: 'after', version: 0 });
  });

  it("when the header is an endpoint stream's ID with a message number, then it is no position: reset", () => {
    expect(resumeAtPosition('41-7', undefined)).toEqual({ kind: 'unknown' });
  });
});
