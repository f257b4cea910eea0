import { buildWebhookPayload, isEmptyPayload } from '../delivery/payload.ts';
import type { Issue } from '../domain/issues.ts';
import { afterUpdate, planDeliveries } from '../domain/lifecycle.ts';
import type { EndpointRecord } from '../domain/record.ts';
import { applyUpdate, type UpdateParams } from '../domain/update.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, reply } from '../http/operations.ts';
import { invalid, unauthorized } from '../http/problem.ts';
import type { Decision } from '../store/port.ts';
import { tokenMatchesDigest } from '../tokens.ts';

type Result =
  | { kind: 'ok'; record: EndpointRecord; queued: number }
  | { kind: 'unauthorized' }
  | { kind: 'invalid'; issues: Issue[] };

/** The webhook body for a record's message; undefined when there is nothing to show. */
function payloadFor(record: EndpointRecord): string | undefined {
  const payload = buildWebhookPayload(record);
  return isEmptyPayload(payload) ? undefined : JSON.stringify(payload);
}

export const updateEndpoint =
  ({ store, allowHttpWebhooks, clock, messageTtlMs, onDeliveriesQueued }: AppDeps): Handler =>
  async (req, res) => {
    // The validator has checked and coerced every parameter against the spec.
    const { token, ...params } = req.query as unknown as UpdateParams & { token: string };
    const now = clock();
    // Authentication, the update rules, the lifecycle and the outbox all commit in one transaction.
    const result = await store.update<Result>(pathParam(req, 'endpoint'), (current): Decision<Result> => {
      if (!current || !tokenMatchesDigest(current.tokenHash, token)) return { result: { kind: 'unauthorized' } };
      const outcome = applyUpdate(current.record, params, { allowHttpWebhooks });
      if (!outcome.ok) return { result: { kind: 'invalid', issues: outcome.issues } };
      if (params.only_check === true || (!outcome.changed && params.trigger === undefined)) {
        return { result: { kind: 'ok', record: current.record, queued: 0 } };
      }
      const row = afterUpdate(current, outcome.record, params.trigger, now);
      const deliveries = params.trigger === true ? planDeliveries(row, now + messageTtlMs, payloadFor) : [];
      return { write: { ...row, deliveries }, result: { kind: 'ok', record: row.record, queued: deliveries.length } };
    });
    if (result.kind === 'unauthorized') throw unauthorized();
    if (result.kind === 'invalid') throw invalid(result.issues);
    if (result.queued > 0) onDeliveriesQueued();
    reply(res, 'updateEndpoint', 200, result.record);
  };
