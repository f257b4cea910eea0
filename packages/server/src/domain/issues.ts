/** One thing wrong with one request parameter; becomes an entry of a 400 problem's `errors`. */
export interface Issue {
  parameter: string;
  in: 'query' | 'path' | 'header' | 'body';
  message: string;
}

export const queryIssue = (parameter: string, message: string): Issue => ({ parameter, in: 'query', message });
