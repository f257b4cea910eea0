// Removing a run's seeded endpoints from a shared PostgreSQL database (`pnpm bench` and `pnpm
// bench:ab` seed theirs under a prefix of their own). A failure is reported, not thrown: it runs while
// a benchmark is ending, and the rows it leaves are named by their prefix.
import { runNode } from './procs.ts';

export async function deleteSeededRows(prefix: string, env: NodeJS.ProcessEnv, checkout: string): Promise<void> {
  const r = await runNode('seeder (cleanup)', ['bench/seed.ts', '--delete-prefix', prefix], env, checkout, 5 * 60_000, true);
  if (r.code !== 0) console.error(`  could not delete the PostgreSQL rows with prefix ${prefix}:\n${r.output}`);
}
