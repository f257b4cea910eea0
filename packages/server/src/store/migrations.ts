// Schema migrations, for both stores: numbered `.sql` files in each adapter's `migrations/` folder
// (`sqlite/migrations/`, `postgres/migrations/`), shipped beside the compiled code (scripts/build-server.ts).
// `pendingMigrations` is the one runner's rule: the files in version order, those the database has not
// recorded yet. Each adapter applies them in its own transactions and records them as that database
// always has: SQLite in `PRAGMA user_version` (how many ran), PostgreSQL in `schema_migrations` (which).
// Migrations are append-only: a version, once released, keeps its file unchanged.
import { readdirSync, readFileSync } from 'node:fs';

/** One SQL file, applied at most once per database. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const MIGRATION_FILE = /^(\d+)_([a-z0-9_]+)\.sql$/;

/** Reads `NNNN_name.sql` files in version order; versions must run 1, 2, 3 ... without gaps. */
export function loadMigrations(dir: URL): Migration[] {
  const migrations = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((file) => {
      const m = MIGRATION_FILE.exec(file);
      if (!m) throw new Error(`migration file ${file}: expected NNNN_name.sql`);
      return { version: Number(m[1]), name: m[2]!, sql: readFileSync(new URL(file, dir), 'utf8') };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration versions must be 1..n without gaps; found ${m.version} at position ${i + 1}`);
  });
  return migrations;
}

/** The migrations a database that has recorded `applied` still needs, in order. */
export function pendingMigrations(migrations: readonly Migration[], applied: (version: number) => boolean): Migration[] {
  return migrations.filter((m) => !applied(m.version));
}
