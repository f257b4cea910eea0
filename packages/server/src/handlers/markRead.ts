import { decideMarkReadAs, type MarkReadAsResult } from '../domain/lifecycle.ts';
import { type Actor, actingPlatform, authenticate, presentsBotKey, type Unauthenticated } from '../http/auth/authenticate.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, queryOf } from '../http/operations.ts';
import { HttpProblem, forbidden, invalid, unauthorized } from '../http/problem.ts';
import { seenBy } from '../http/record/botView.ts';
import { reportedCopy } from '../http/record/copyIds.ts';
import { shownRecord } from '../http/record/recordView.ts';
import { respond } from '../http/respond.ts';

export const markRead =
  ({ store, bots, adminTokenHash, validateResponses }: AppDeps): Handler =>
  async (req, res) => {
    const { platform: named, message_number: number, message_id: reported } = queryOf(req, 'markRead');
    // A token's holder acts for no platform in particular, so it must name one (a bot key's is its own;
    // the admin token, also a bearer, is told to name one once it is known to be that).
    if (named === undefined && !presentsBotKey(req)) {
      throw invalid([
        {
          parameter: 'platform',
          in: 'query',
          message: 'is required when authenticating with the token (a bot key marks its own platform)',
        },
      ]);
    }
    if (reported !== undefined && number === undefined) {
      throw invalid([
        { parameter: 'message_number', in: 'query', message: 'is required with message_id: it names the message whose copy has that ID' },
      ]);
    }
    const id = pathParam(req, 'endpoint');
    const copyId =
      reported === undefined || number === undefined
        ? undefined
        : await reportedCopy(req, { store, bots, adminTokenHash }, id, named, number, reported);
    let actor: Actor | undefined;
    const result = await store.endpoints.update<MarkReadAsResult | Unauthenticated>(id, (current) => {
      actor = authenticate(req, current, { bots, adminTokenHash });
      if (!actor || !current) return { result: { kind: 'unauthorized' } };
      return decideMarkReadAs(actingPlatform(actor), named, current, number, copyId);
    });
    if (result.kind === 'unauthorized' || !actor) throw unauthorized();
    if (result.kind === 'no platform') {
      throw invalid([{ parameter: 'platform', in: 'query', message: 'is required when authenticating with the admin token' }]);
    }
    if (result.kind === 'forbidden') throw forbidden(result.detail);
    if (result.kind === 'no such message') {
      throw new HttpProblem(409, `There is no message ${number} (the newest is ${result.newest}); nothing was marked.`);
    }
    // The record as this platform now sees it: the next message it has to relay.
    const { row, platform } = result;
    const view = await shownRecord(store, id, { record: row.record, recordJson: JSON.stringify(row.record), state: row.state }, platform);
    respond(res, 'markRead').jsonText(200, seenBy(actor, view), { messageNumber: view.number, validateResponses });
  };
