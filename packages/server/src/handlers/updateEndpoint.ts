import { webhookBody } from '../delivery/payload.ts';
import { decideUpdate, type UpdateResult } from '../domain/updateDecision.ts';
import type { AppDeps } from '../http/deps.ts';
import { setMessageNumber } from '../http/messageNumber.ts';
import { type Handler, pathParam, queryOf, replyJsonText } from '../http/operations.ts';
import { presentsTokenOf } from '../http/presentedToken.ts';
import { invalid, unauthorized } from '../http/problem.ts';

export const updateEndpoint =
  ({ store, allowPrivateWebhooks, clock, messageTtlMs, onDeliveriesQueued, validateResponses }: AppDeps): Handler =>
  async (req, res) => {
    const { token: _token, ...params } = queryOf(req, 'updateEndpoint');
    const context = { allowPrivateWebhooks, messageTtlMs, webhookBody, now: clock() };
    // Authentication, the update rules, the lifecycle and the outbox all commit in one transaction.
    const result = await store.update<UpdateResult | { kind: 'unauthorized' }>(pathParam(req, 'endpoint'), (current) =>
      presentsTokenOf(req, current) ? decideUpdate(current, params, context) : { result: { kind: 'unauthorized' } },
    );
    if (result.kind === 'unauthorized') throw unauthorized();
    if (result.kind === 'invalid') throw invalid(result.issues);
    if (result.queued > 0) onDeliveriesQueued();
    setMessageNumber(res, result.state);
    replyJsonText(res, 'updateEndpoint', 200, result.json, () => result.record, validateResponses);
  };
