import { describe, expect, it } from 'vitest';
import { queryNameIssues, queryNamesByOperation } from '../../src/http/request/queryNames.ts';
import { loadSpecIndex } from '../../src/spec/specIndex.ts';

const names = queryNamesByOperation(loadSpecIndex());

describe('query names (what the validator leaves to us)', () => {
  it('when a query holds several unknown names and empty values, then each one is named, not only the first', () => {
    const update = names.get('updateEndpoint')!;
    expect(queryNameIssues(update, { token: 'x', foo: '1', bar: '2', beta: '' })).toEqual([
      { parameter: 'foo', in: 'query', message: 'unknown parameter' },
      { parameter: 'bar', in: 'query', message: 'unknown parameter' },
      { parameter: 'beta', in: 'query', message: 'must not be empty' },
    ]);
  });

  it("when the operation's security takes an API key in the query, then its name is known; a health check knows none", () => {
    expect(queryNameIssues(names.get('getEndpoint')!, { token: 'x' })).toEqual([]);
    expect(queryNameIssues(names.get('getLiveness')!, { token: 'x' })).toEqual([
      { parameter: 'token', in: 'query', message: 'unknown parameter' },
    ]);
  });

  it('when a parameter allows an empty value, then an empty value is not an issue', () => {
    const [operationId, withEmpty] = [...names].find(([, n]) => n.emptyAllowed.size > 0)!;
    const name = [...withEmpty.emptyAllowed][0]!;
    expect(queryNameIssues(withEmpty, { [name]: '' }), operationId).toEqual([]);
  });
});
