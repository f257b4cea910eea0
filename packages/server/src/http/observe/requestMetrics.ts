// Counts and times every request by the operationId the validator matched (an observer of the request
// log's completion).
import type { Metrics } from '../../observability/metrics.ts';
import { openapiOf } from '../operations.ts';
import type { CompletionObserver } from './requestLog.ts';

export function requestMetrics(metrics: Metrics): CompletionObserver {
  type Children = {
    count: ReturnType<Metrics['httpRequests']['labels']>;
    duration: ReturnType<Metrics['httpDuration']['labels']>;
  };
  // The metric children of each (operation, status) are looked up once: prom-client hashes a label
  // object on every call. A few operations times a few statuses.
  const children = new Map<string, Children>();
  const childrenOf = (operation: string, status: number) => {
    const key = `${operation} ${status}`;
    let found = children.get(key);
    if (!found) {
      found = { count: metrics.httpRequests.labels(operation, String(status)), duration: metrics.httpDuration.labels(operation) };
      children.set(key, found);
    }
    return found;
  };
  return (req, res, elapsedMs) => {
    const { count, duration } = childrenOf(openapiOf(req).schema?.operationId ?? 'unmatched', res.statusCode);
    count.inc();
    duration.observe(elapsedMs / 1000);
  };
}
