import type { Forbidden } from '../domain/botRights.ts';
import { decideRemovalAs, type RemovalResult } from '../domain/removal.ts';
import { type Actor, actingPlatform, authenticate, type Unauthenticated } from '../http/auth/authenticate.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, queryOf } from '../http/operations.ts';
import { forbidden, invalid, unauthorized } from '../http/problem.ts';
import { seenBy } from '../http/record/botView.ts';
import { pendingNumber } from '../http/record/messageNumber.ts';
import { respond } from '../http/respond.ts';

export const removeFromEndpoint =
  ({ store, bots, adminTokenHash, validateResponses }: AppDeps): Handler =>
  async (req, res) => {
    const { token: _token, ...params } = queryOf(req, 'removeFromEndpoint');
    // Authentication, the removal rules and the outbox commit in one transaction.
    let actor: Actor | undefined;
    const result = await store.endpoints.update<RemovalResult | Forbidden | Unauthenticated>(pathParam(req, 'endpoint'), (current) => {
      actor = authenticate(req, current, { bots, adminTokenHash });
      if (!actor || !current) return { result: { kind: 'unauthorized' } };
      return decideRemovalAs(actingPlatform(actor), current, params);
    });
    if (result.kind === 'unauthorized' || !actor) throw unauthorized();
    if (result.kind === 'forbidden') throw forbidden(result.detail, result.issues);
    if (result.kind === 'invalid') throw invalid(result.issues);
    const committed = { json: result.json, parsed: () => result.record };
    respond(res, 'removeFromEndpoint').jsonText(200, seenBy(actor, committed), {
      messageNumber: pendingNumber(result.state),
      validateResponses,
    });
  };
