// bench/lib/collections.ts: each scenario's note on V8's collections, read from the server's own
// /-/metrics before and after the measured window.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { collectionsBetween, describeCollections, parseCollections } from '../../../bench/lib/collections.ts';
import { createMetrics } from '../src/observability/metrics.ts';

const exposition = (minor: [number, number], major: [number, number]) =>
  [
    '# TYPE chatbridge_nodejs_gc_duration_seconds histogram',
    `chatbridge_nodejs_gc_duration_seconds_sum{kind="minor"} ${minor[1]}`,
    `chatbridge_nodejs_gc_duration_seconds_count{kind="minor"} ${minor[0]}`,
    `chatbridge_nodejs_gc_duration_seconds_sum{kind="major"} ${major[1]}`,
    `chatbridge_nodejs_gc_duration_seconds_count{kind="major"} ${major[0]}`,
  ].join('\n');

describe("the collections note of pnpm bench", () => {
  it('when the window saw collections, then it gives each kind and their share of the window', () => {
    const before = parseCollections(exposition([100, 0.05], [2, 0.01]))!;
    const after = parseCollections(exposition([780, 0.45], [3, 0.02]))!;
    const c = collectionsBetween(before, after, 10);
    expect(c.minor).toEqual({ count: 680, ms: expect.closeTo(400, 6) });
    expect(c.major).toEqual({ count: 1, ms: expect.closeTo(10, 6) });
    expect(c.incremental).toEqual({ count: 0, ms: 0 }); // not yet exposed: counts as none
    expect(describeCollections(c)).toBe(
      "V8's collections (the server's /-/metrics, at least): 4.1% of the window; 680 minor (400 ms), 1 major (10 ms), 0 incremental steps (0 ms)",
    );
  });

  it('when collections take over a tenth of the window, then the note says so', () => {
    const c = collectionsBetween(parseCollections(exposition([0, 0], [0, 0]))!, parseCollections(exposition([900, 1.5], [20, 0.2]))!, 10);
    expect(describeCollections(c)).toMatch(/^V8's collections .*: 17\.0% of the window; .*: HIGH, look for request objects kept past their request$/);
  });

  it("when the server's registry has seen a collection, then its exposition is what the note reads", async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const metrics = createMetrics();
    gc();
    // prom-client's observer is told of collections asynchronously.
    let totals;
    for (let i = 0; i < 50 && !totals?.major.count; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      totals = parseCollections(await metrics.registry.metrics());
    }
    expect(totals?.major.count).toBeGreaterThanOrEqual(1);
  });

  it('when the server exposes no collections (an older checkout), then there is nothing to read', () => {
    expect(parseCollections('chatbridge_http_requests_total 3')).toBeUndefined();
  });
});
