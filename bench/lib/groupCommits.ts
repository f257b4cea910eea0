// SQLite's group commits as the server itself reports them on /-/metrics: read before and after a
// scenario's measured window, their difference says how many updates each commit carried and how
// much of the event loop's time per update went to the statements and to the COMMIT, with no patch.
import { sample } from './serverMetrics.ts';

/** The running totals of the group-commit series at one moment. */
export interface GroupCommitTotals {
  commits: number;
  updates: number;
  statementsS: number;
  commitS: number;
}

/** The totals in a Prometheus exposition, or undefined when the server reports no group commits (PostgreSQL). */
export function parseGroupCommits(metricsText: string): GroupCommitTotals | undefined {
  const updates = sample(metricsText, 'chatbridge_sqlite_group_commit_updates_sum');
  if (updates === undefined) return undefined;
  return {
    commits: sample(metricsText, 'chatbridge_sqlite_group_commit_updates_count') ?? 0,
    updates,
    // A labelled series appears with its first observation.
    statementsS: sample(metricsText, 'chatbridge_sqlite_group_commit_seconds_sum{phase="statements"}') ?? 0,
    commitS: sample(metricsText, 'chatbridge_sqlite_group_commit_seconds_sum{phase="commit"}') ?? 0,
  };
}

/** One line for the scenario's notes, or undefined when there is nothing to say. */
export function describeGroupCommits(before: GroupCommitTotals, after: GroupCommitTotals, wallS: number): string | undefined {
  const commits = after.commits - before.commits;
  const updates = after.updates - before.updates;
  if (commits <= 0 || updates <= 0) return undefined;
  const usPerUpdate = (seconds: number) => (seconds * 1e6) / updates;
  const statements = usPerUpdate(after.statementsS - before.statementsS);
  const commit = usPerUpdate(after.commitS - before.commitS);
  const loopUsPerUpdate = (wallS * 1e6) / updates;
  const share = (us: number) => `${((us / loopUsPerUpdate) * 100).toFixed(0)}%`;
  return (
    `group commits (the server's /-/metrics): ${(updates / commits).toFixed(1)} updates per commit; per update, ` +
    `statements ${statements.toFixed(1)} µs (${share(statements)} of the wall time) and COMMIT ${commit.toFixed(1)} µs (${share(commit)})`
  );
}
