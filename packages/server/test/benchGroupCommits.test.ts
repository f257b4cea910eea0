// bench/lib/groupCommits.ts: the update scenario's note on where the event loop's time went, read
// from the server's own /-/metrics before and after the measured window.
import { describe, expect, it } from 'vitest';
import { describeGroupCommits, parseGroupCommits } from '../../../bench/lib/groupCommits.ts';

const exposition = (commits: number, updates: number, statementsS: number, commitS: number) =>
  [
    '# TYPE chatbridge_sqlite_group_commit_seconds histogram',
    `chatbridge_sqlite_group_commit_seconds_sum{phase="statements"} ${statementsS}`,
    `chatbridge_sqlite_group_commit_seconds_count{phase="statements"} ${commits}`,
    `chatbridge_sqlite_group_commit_seconds_sum{phase="commit"} ${commitS}`,
    `chatbridge_sqlite_group_commit_seconds_count{phase="commit"} ${commits}`,
    '# TYPE chatbridge_sqlite_group_commit_updates histogram',
    `chatbridge_sqlite_group_commit_updates_bucket{le="+Inf"} ${commits}`,
    `chatbridge_sqlite_group_commit_updates_sum ${updates}`,
    `chatbridge_sqlite_group_commit_updates_count ${commits}`,
  ].join('\n');

describe('the group-commit note of pnpm bench', () => {
  it('when the window saw commits, then it gives updates per commit and each phase per update with its share of the wall time', () => {
    const before = parseGroupCommits(exposition(10, 300, 0.01, 0.02))!;
    const after = parseGroupCommits(exposition(110, 3_300, 0.07, 0.14))!;
    // 3,000 updates in 1 s: 333.3 µs of wall time each; statements 20 µs (6%), COMMIT 40 µs (12%).
    expect(describeGroupCommits(before, after, 1)).toBe(
      "group commits (the server's /-/metrics): 30.0 updates per commit; per update, statements 20.0 µs (6% of the wall time) and COMMIT 40.0 µs (12%)",
    );
  });

  it('when the server reports no group commits (PostgreSQL, or before any update), then there is nothing to say', () => {
    expect(parseGroupCommits('# TYPE chatbridge_http_requests_total counter\nchatbridge_http_requests_total 3')).toBeUndefined();
    const idle = parseGroupCommits(exposition(5, 50, 0.001, 0.002))!;
    expect(describeGroupCommits(idle, idle, 1)).toBeUndefined();
  });

  it('when the labelled series have not appeared yet, then they count as zero', () => {
    const first = parseGroupCommits('chatbridge_sqlite_group_commit_updates_sum 0\nchatbridge_sqlite_group_commit_updates_count 0');
    expect(first).toEqual({ commits: 0, updates: 0, statementsS: 0, commitS: 0 });
  });
});
