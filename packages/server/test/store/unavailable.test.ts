// Which store failures are outages (503, retry) and which are bugs (500): a bot or load balancer that
// retries only on 503 must see one for every way a database goes away.
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { isUnavailable } from '../../src/store/unavailable.ts';

/** node:sqlite's own error when the database cannot grow (a full disk; here a page cap). */
function sqliteDiskFull(): unknown {
  const db = new DatabaseSync(':memory:');
  db.exec('CREATE TABLE t (x TEXT); PRAGMA max_page_count = 3');
  try {
    for (let i = 0; i < 100; i++) db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(1000));
  } catch (error) {
    return error;
  } finally {
    db.close();
  }
  throw new Error('expected the insert to fail');
}

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('isUnavailable', () => {
  it.each([
    ['a connect that got no answer (a partition)', new Error('timeout expired')],
    ['a pool that could not connect in time', new Error('timeout exceeded when trying to connect')],
    ['a server that stopped answering a query', new Error('Query read timeout')],
    ['a dropped connection', new Error('Connection terminated unexpectedly')],
    ['a refused connection', pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a database closed to connections', pgError('55000', 'database "x" is not currently accepting connections')],
    ['a database that does not exist (a restore)', pgError('3D000', 'database "x" does not exist')],
    ['failed credentials (a rotation)', pgError('28P01', 'password authentication failed for user "chatbridge"')],
    ['a server shutting down', pgError('57P01', 'terminating connection due to administrator command')],
    ['SQLite locked by another process', pgError('SQLITE_BUSY', 'database is locked')],
    ["SQLite's disk full", sqliteDiskFull()],
    ["PostgreSQL's disk full", pgError('53100', 'could not extend file "base/16384/16385": No space left on device')],
    ['PostgreSQL out of memory', pgError('53200', 'out of memory')],
    ['a failover that left the connection on a standby', pgError('25006', 'cannot execute UPDATE in a read-only transaction')],
  ])('when the failure is %s, then it is an outage', (_case, error) => {
    expect(isUnavailable(error)).toBe(true);
  });

  it.each([
    ['a syntax error', pgError('42601', 'syntax error at or near "SELEC"')],
    ['a unique violation', pgError('23505', 'duplicate key value violates unique constraint')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'record')")],
  ])('when the failure is %s, then it is not an outage', (_case, error) => {
    expect(isUnavailable(error)).toBe(false);
  });
});
