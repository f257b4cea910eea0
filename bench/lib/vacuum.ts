// VACUUM ANALYZE of chatbridge's PostgreSQL tables, for the benchmarks that seed a shared database.
//
// Every benchmarked update leaves dead rows behind (the row's old version, the event it pushes out of
// the window) and a run deletes its thousand endpoints at the end. PostgreSQL's autovacuum reclaims
// them within a minute or so; where it is off (as on this project's benchmark machines), nothing
// does: each full run left 30-40 thousand dead event rows (50-60 MB), and the event table had grown
// to 226 MB holding no live row (BENCHMARKS.md, fifteenth pass). So a run vacuums the tables once its
// rows are seeded (every run starts from the same state, with fresh planner statistics) and again
// once they are deleted (it leaves the database as it found it). Only chatbridge's own tables: the
// ones its migrations create (the rate limiter's among them).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

/** The tables chatbridge's PostgreSQL migrations create, read from the migration files of `checkout`. */
export function chatbridgeTables(checkout: string): string[] {
  const dir = join(checkout, 'packages/server/src/store/migrations/postgres');
  const names = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.sql'))) {
    const sql = readFileSync(join(dir, file), 'utf8');
    for (const m of sql.matchAll(/CREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)/gi)) names.add(m[1]!.toLowerCase());
  }
  return [...names].sort();
}

/**
 * Vacuums and analyses those of `tables` that exist in the connection's current schema. Returns the
 * ones it vacuumed and how long it took; a failure is reported, not thrown (a benchmark still runs).
 */
export async function vacuumTables(databaseUrl: string, tables: string[]): Promise<{ tables: string[]; seconds: number } | { error: string }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  const started = performance.now();
  try {
    await client.connect();
    const { rows } = await client.query<{ name: string }>(
      'SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename = ANY($1) ORDER BY tablename',
      [tables],
    );
    const present = rows.map((r) => r.name);
    // One statement per table: VACUUM cannot run in a transaction block, and names cannot be bound.
    for (const name of present) await client.query(`VACUUM (ANALYZE) ${pg.escapeIdentifier(name)}`);
    return { tables: present, seconds: (performance.now() - started) / 1000 };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  } finally {
    await client.end().catch(() => {});
  }
}

/** Vacuums `checkout`'s chatbridge tables on `databaseUrl` and says so (or why not), `when` naming the moment. */
export async function vacuumAndReport(databaseUrl: string, checkout: string, when: string): Promise<string> {
  const done = await vacuumTables(databaseUrl, chatbridgeTables(checkout));
  return 'error' in done
    ? `  could not vacuum chatbridge's tables ${when}: ${done.error}`
    : `  vacuumed ${done.tables.join(', ')} ${when} in ${done.seconds.toFixed(1)} s`;
}
