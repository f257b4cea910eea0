// One line naming an error, for an operator: the store's failures as the server names them at start-up
// ("the store cannot be opened: ..."), others by their message. Drivers' messages carry no password.
import { isUnavailable } from './store/unavailable.ts';

/** The error's own words: its message, or (an AggregateError of every address tried) its parts'. */
function wordsOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as NodeJS.ErrnoException).code;
  if (err.message) return err.message;
  if (err instanceof AggregateError && err.errors.length > 0) return err.errors.map(wordsOf).join('; ');
  return code ?? err.name;
}

export function errorLine(err: unknown): string {
  const words = wordsOf(err).replace(/\s*\n\s*/g, ' ');
  return isUnavailable(err) ? `the store cannot be opened: ${words}` : words;
}
