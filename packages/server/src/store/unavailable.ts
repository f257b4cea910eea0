// Marks store failures that mean "the database cannot be reached right now", so the HTTP layer can
// answer 503 (retry later) instead of 500 (a bug). Applied by the store decorator in
// observability/instrumentStore.ts, so adapters stay unaware.
export class StoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the store is unavailable', { cause });
    this.name = 'StoreUnavailableError';
  }
}

// PostgreSQL: connection exceptions (08xxx), admin shutdown / crash (57P0x), cannot connect now,
// statement or lock timeout (57014, 55P03), insufficient resources (53xxx: a full disk, out of
// memory, too many connections), a read-only transaction (25006: a failover left us on a standby),
// and what a restore or a credentials rotation looks like from here: the database does not exist
// (3D000), the login fails (28000, 28P01); node-postgres and socket-level failures (`timeout expired`
// is a connect that got no answer: a partition); SQLite: the file is locked past busy_timeout, the
// disk is full, or it fails to read or write (node:sqlite's codes are numeric, so by message).
const UNAVAILABLE_CODES =
  /^(08...|57P0\d|57014|55P03|53...|25006|3D000|28000|28P01|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|SQLITE_BUSY)$/;
const UNAVAILABLE_MESSAGES =
  /timeout exceeded when trying to connect|timeout expired|Connection terminated|Query read timeout|connect ECONNREFUSED|Client has encountered a connection error|is not currently accepting connections|database is locked|database or disk is full|disk I\/O error/i;

export function isUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; errcode?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : typeof e.errcode === 'string' ? e.errcode : '';
  return UNAVAILABLE_CODES.test(code) || (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message));
}
