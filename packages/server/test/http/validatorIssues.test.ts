import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { issueFromValidator, memberSegments } from '../../src/http/request/validatorIssues.ts';

const request = (body: unknown) => ({ body, query: {}, originalUrl: '/admin/endpoints' }) as unknown as Request;
const additional = (path: string) => ({
  path,
  message: 'must NOT have additional properties',
  errorCode: 'additionalProperties.openapi.validation',
});

describe("validator issues (the validator's errors as the parameter or member the request wrote)", () => {
  it('when an unknown body member holds "/" or "~", then it is named as sent', () => {
    const body = { 'a/b.c': 1, 'x~1y': 2 };
    expect(issueFromValidator(additional('/body/a/b.c'), request(body)).parameter).toBe('a/b.c');
    expect(issueFromValidator(additional('/body/x~1y'), request(body)).parameter).toBe('x~1y');
  });

  it('when an unknown member is named "", then it is named "" in the body', () => {
    expect(issueFromValidator(additional(''), request({ '': 1 }))).toEqual({
      parameter: '',
      in: 'body',
      message: 'must NOT have additional properties',
    });
  });

  it("when the member is nested, then the path to it follows the body's escaped segments", () => {
    expect(memberSegments('list~1s/0/k/v', { 'list/s': [{ 'k/v': 1 }] })).toEqual(['list/s', '0', 'k/v']);
    expect(memberSegments('id', {})).toEqual(['id']); // a missing required member
  });
});
