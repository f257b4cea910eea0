import { webhookBody } from '../delivery/payload.ts';
import { platformRefusal } from '../domain/actingPlatform.ts';
import { decideUpdate, type UpdateResult } from '../domain/updateDecision.ts';
import { authenticate } from '../http/authenticate.ts';
import type { AppDeps } from '../http/deps.ts';
import { setMessageNumber } from '../http/messageNumber.ts';
import { type Handler, pathParam, queryOf, replyJsonText } from '../http/operations.ts';
import { forbidden, invalid, unauthorized } from '../http/problem.ts';

type Refused = { kind: 'unauthorized' } | { kind: 'forbidden'; detail: string };

export const updateEndpoint =
  ({ store, bots, allowPrivateWebhooks, clock, messageTtlMs, onDeliveriesQueued, validateResponses }: AppDeps): Handler =>
  async (req, res) => {
    const { token: _token, ...params } = queryOf(req, 'updateEndpoint');
    const context = { allowPrivateWebhooks, messageTtlMs, webhookBody, now: clock() };
    // Authentication, the update rules, the lifecycle and the outbox all commit in one transaction.
    const result = await store.update<UpdateResult | Refused>(pathParam(req, 'endpoint'), (current) => {
      const actor = authenticate(req, current, bots);
      if (!actor || !current) return { result: { kind: 'unauthorized' } };
      const refusal = platformRefusal(actor.kind === 'bot' ? actor.platform : undefined, params.sender, 'sender');
      if (refusal) return { result: { kind: 'forbidden', detail: refusal } };
      return decideUpdate(current, params, context);
    });
    if (result.kind === 'unauthorized') throw unauthorized();
    if (result.kind === 'forbidden') throw forbidden(result.detail);
    if (result.kind === 'invalid') throw invalid(result.issues);
    if (result.queued > 0) onDeliveriesQueued();
    setMessageNumber(res, result.state);
    replyJsonText(res, 'updateEndpoint', 200, result.json, () => result.record, validateResponses);
  };
