import { webhookBody } from '../delivery/payload.ts';
import { platformRefusal } from '../domain/actingPlatform.ts';
import { decideUpdate, type UpdateResult } from '../domain/updateDecision.ts';
import { authenticate } from '../http/authenticate.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, queryOf, replyJsonText } from '../http/operations.ts';
import { HttpProblem, forbidden, invalid, unauthorized } from '../http/problem.ts';
import { setShownNumber, viewFor } from '../http/recordView.ts';
import type { Platform } from '../domain/record.ts';

type Refused = { kind: 'unauthorized' } | { kind: 'forbidden'; detail: string };

/** What a client refused for a full queue is told to wait: platforms read at bot speed. */
export const QUEUE_FULL_RETRY_AFTER_SECONDS = 5;

export const updateEndpoint =
  ({
    store,
    bots,
    allowPrivateWebhooks,
    clock,
    messageTtlMs,
    messageQueueLimits,
    onDeliveriesQueued,
    validateResponses,
  }: AppDeps): Handler =>
  async (req, res) => {
    const { token: _token, ...params } = queryOf(req, 'updateEndpoint');
    const context = { allowPrivateWebhooks, messageTtlMs, webhookBody, now: clock(), queueLimits: messageQueueLimits };
    const id = pathParam(req, 'endpoint');
    let acting: Platform | undefined;
    // Authentication, the update rules, the lifecycle, the message log and the outbox all commit in one transaction.
    const result = await store.update<UpdateResult | Refused>(id, (current) => {
      const actor = authenticate(req, current, bots);
      if (!actor || !current) return { result: { kind: 'unauthorized' } };
      acting = actor.kind === 'bot' ? actor.platform : undefined;
      const refusal = platformRefusal(acting, params.sender, 'sender');
      if (refusal) return { result: { kind: 'forbidden', detail: refusal } };
      return decideUpdate(current, params, context);
    });
    if (result.kind === 'unauthorized') throw unauthorized();
    if (result.kind === 'forbidden') throw forbidden(result.detail);
    if (result.kind === 'invalid') throw invalid(result.issues);
    if (result.kind === 'queue full') {
      res.setHeader('Retry-After', String(QUEUE_FULL_RETRY_AFTER_SECONDS));
      throw new HttpProblem(429, `The message was not accepted: ${result.detail}. Nothing was changed.`);
    }
    if (result.queued > 0) onDeliveriesQueued();
    // A check is answered as the caller reads the record; a change, with the record as committed
    // (its meta showing the newest message: with trigger=true, the one just accepted).
    const view =
      params.only_check === true
        ? await viewFor(store, id, { record: result.record, recordJson: result.json, state: result.state }, acting)
        : { json: result.json, record: () => result.record, number: result.state.pendingSince === null ? undefined : result.state.seq };
    setShownNumber(res, view);
    replyJsonText(res, 'updateEndpoint', 200, view.json, view.record, validateResponses);
  };
