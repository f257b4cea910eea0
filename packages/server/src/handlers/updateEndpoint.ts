import { webhookBody } from '../delivery/payload.ts';
import { platformRefusal } from '../domain/actingPlatform.ts';
import { refusalDetail, updateRefusals } from '../domain/botRights.ts';
import type { Issue } from '../domain/issues.ts';
import { decideUpdate, type UpdateResult } from '../domain/updateDecision.ts';
import { type Actor, actingPlatform, authenticate } from '../http/authenticate.ts';
import { viewFor } from '../http/botView.ts';
import type { AppDeps } from '../http/deps.ts';
import { setMessageNumber } from '../http/messageNumber.ts';
import { type Handler, pathParam, queryOf, replyJsonText } from '../http/operations.ts';
import { forbidden, invalid, unauthorized } from '../http/problem.ts';

type Refused = { kind: 'unauthorized' } | { kind: 'forbidden'; detail: string; issues?: Issue[] };

export const updateEndpoint =
  ({ store, bots, adminTokenHash, allowPrivateWebhooks, clock, messageTtlMs, onDeliveriesQueued, validateResponses }: AppDeps): Handler =>
  async (req, res) => {
    const { token: _token, ...params } = queryOf(req, 'updateEndpoint');
    const context = { allowPrivateWebhooks, messageTtlMs, webhookBody, now: clock() };
    // Authentication, the update rules, the lifecycle and the outbox all commit in one transaction.
    let actor: Actor | undefined;
    const result = await store.update<UpdateResult | Refused>(pathParam(req, 'endpoint'), (current) => {
      actor = authenticate(req, current, { bots, adminTokenHash });
      if (!actor || !current) return { result: { kind: 'unauthorized' } };
      const acting = actingPlatform(actor);
      const refusal = platformRefusal(acting, params.sender, 'sender');
      if (refusal) return { result: { kind: 'forbidden', detail: refusal } };
      const issues = acting === undefined ? [] : updateRefusals(current.record, acting, params);
      if (acting !== undefined && issues.length > 0)
        return { result: { kind: 'forbidden', detail: refusalDetail(acting, issues), issues } };
      return decideUpdate(current, params, context);
    });
    if (result.kind === 'unauthorized' || !actor) throw unauthorized();
    if (result.kind === 'forbidden') throw forbidden(result.detail, result.issues);
    if (result.kind === 'invalid') throw invalid(result.issues);
    if (result.queued > 0) onDeliveriesQueued();
    setMessageNumber(res, result.state);
    const view = viewFor(actor, result.record, result.json);
    replyJsonText(res, 'updateEndpoint', 200, view.json, () => view.record, validateResponses);
  };
