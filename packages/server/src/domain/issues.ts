import type { components } from '@chatbridge/api';

/** One thing wrong with one request parameter; becomes an entry of a 400 problem's `errors`. */
export type Issue = components['schemas']['ValidationIssue'];

export const queryIssue = (parameter: string, message: string): Issue => ({ parameter, in: 'query', message });
