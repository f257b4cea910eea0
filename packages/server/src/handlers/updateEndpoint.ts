import { webhookBody } from '../delivery/payload.ts';
import type { Issue } from '../domain/issues.ts';
import { afterUpdate, planDeliveries } from '../domain/lifecycle.ts';
import type { EndpointRecord } from '../domain/record.ts';
import { applyUpdate, type UpdateParams } from '../domain/update.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, replyJsonText } from '../http/operations.ts';
import { invalid, unauthorized } from '../http/problem.ts';
import type { Decision, MessageState } from '../store/port.ts';
import { setMessageNumber } from '../http/messageNumber.ts';
import { presentsTokenOf } from '../http/presentedToken.ts';

type Result =
  /** `json`: the record's JSON text, sent as it is (it is what was committed). */
  | { kind: 'ok'; record: EndpointRecord; json: string; queued: number; state: MessageState }
  | { kind: 'unauthorized' }
  | { kind: 'invalid'; issues: Issue[] };

export const updateEndpoint =
  ({ store, allowPrivateWebhooks, clock, messageTtlMs, onDeliveriesQueued, validateResponses }: AppDeps): Handler =>
  async (req, res) => {
    // The validator has checked and coerced every parameter against the spec.
    const { token: _token, ...params } = req.query as unknown as UpdateParams & { token: string };
    const now = clock();
    // Authentication, the update rules, the lifecycle and the outbox all commit in one transaction.
    const result = await store.update<Result>(pathParam(req, 'endpoint'), (current): Decision<Result> => {
      if (!presentsTokenOf(req, current)) return { result: { kind: 'unauthorized' } };
      const outcome = applyUpdate(current.recordJson, params, { allowPrivateWebhooks });
      if (!outcome.ok) return { result: { kind: 'invalid', issues: outcome.issues } };
      // Nothing to write: nothing changed, and no message starts or ends (trigger=false while idle is a no-op).
      const endsNothing = params.trigger === undefined || (params.trigger === false && current.state.pendingSince === null);
      if (params.only_check === true || (!outcome.changed && endsNothing)) {
        return { result: { kind: 'ok', record: outcome.record, json: outcome.json, queued: 0, state: current.state } };
      }
      const row = afterUpdate(current, outcome.record, params.trigger, now);
      // The lifecycle may have replaced the record (a finished message returns to idle).
      const json = row.record === outcome.record ? outcome.json : JSON.stringify(row.record);
      // A message that finished at once (no other platform has channels) on an idle endpoint leaves
      // the record as it was: nothing to write, and no event for a change that is not one.
      if (json === current.recordJson && row.state.pendingSince === null && current.state.pendingSince === null) {
        return { result: { kind: 'ok', record: row.record, json, queued: 0, state: current.state } };
      }
      const deliveries = params.trigger === true ? planDeliveries(row, now + messageTtlMs, webhookBody) : [];
      return {
        write: { ...row, recordJson: json, deliveries },
        result: { kind: 'ok', record: row.record, json, queued: deliveries.length, state: row.state },
      };
    });
    if (result.kind === 'unauthorized') throw unauthorized();
    if (result.kind === 'invalid') throw invalid(result.issues);
    if (result.queued > 0) onDeliveriesQueued();
    setMessageNumber(res, result.state);
    replyJsonText(res, 'updateEndpoint', 200, result.json, () => result.record, validateResponses);
  };
