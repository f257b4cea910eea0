import { queuedCreateBody } from '../delivery/payload.ts';
import type { Forbidden } from '../domain/botRights.ts';
import { decideUpdateAs, type UpdateResult } from '../domain/updateDecision.ts';
import { type Actor, actingPlatform, authenticate, type Unauthenticated } from '../http/auth/authenticate.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, queryOf } from '../http/operations.ts';
import { HttpProblem, forbidden, invalid, unauthorized } from '../http/problem.ts';
import { seenBy } from '../http/record/botView.ts';
import { newMessageCopies } from '../http/record/copyIds.ts';
import { pendingNumber } from '../http/record/messageNumber.ts';
import { type RecordView, shownRecord } from '../http/record/recordView.ts';
import { respond } from '../http/respond.ts';

/** What a client refused for a full queue is told to wait: platforms read at bot speed. */
export const QUEUE_FULL_RETRY_AFTER_SECONDS = 5;

export const updateEndpoint =
  ({
    store,
    bots,
    adminTokenHash,
    allowPrivateWebhooks,
    clock,
    messageTtlMs,
    messageQueueLimits,
    onDeliveriesQueued,
    validateResponses,
  }: AppDeps): Handler =>
  async (req, res) => {
    const { token: _token, ...params } = queryOf(req, 'updateEndpoint');
    const id = pathParam(req, 'endpoint');
    const reply = await newMessageCopies(req, { store, bots, adminTokenHash }, id, params);
    const context = {
      allowPrivateWebhooks,
      messageTtlMs,
      webhookBody: queuedCreateBody,
      now: clock(),
      queueLimits: messageQueueLimits,
      reply,
    };
    // Authentication, the update rules, the lifecycle, the message log and the outbox all commit in one transaction.
    let actor: Actor | undefined;
    const result = await store.endpoints.update<UpdateResult | Forbidden | Unauthenticated>(id, (current) => {
      actor = authenticate(req, current, { bots, adminTokenHash });
      if (!actor || !current) return { result: { kind: 'unauthorized' } };
      return decideUpdateAs(actingPlatform(actor), current, params, context);
    });
    if (result.kind === 'unauthorized' || !actor) throw unauthorized();
    if (result.kind === 'forbidden') throw forbidden(result.detail, result.issues);
    if (result.kind === 'invalid') throw invalid(result.issues);
    if (result.kind === 'queue full') {
      res.setHeader('Retry-After', String(QUEUE_FULL_RETRY_AFTER_SECONDS));
      throw new HttpProblem(429, `The message was not accepted: ${result.detail}. Nothing was changed.`);
    }
    if (result.queued > 0) onDeliveriesQueued();
    // A check is answered as the caller reads the record; a change, with the record as committed
    // (its meta showing the newest message: with trigger=true, the one just accepted).
    const view: RecordView =
      params.only_check === true
        ? await shownRecord(store, id, { record: result.record, recordJson: result.json, state: result.state }, actingPlatform(actor))
        : { json: result.json, parsed: () => result.record, number: pendingNumber(result.state) };
    respond(res, 'updateEndpoint').jsonText(200, seenBy(actor, view), { messageNumber: view.number, validateResponses });
  };
