import { platformRefusal } from '../domain/actingPlatform.ts';
import { actingPlatform, authenticate } from '../http/auth/authenticate.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, queryOf } from '../http/operations.ts';
import { respond } from '../http/respond.ts';
import { forbidden, unauthorized } from '../http/problem.ts';
import { currentItems } from '../http/record/loggedMessage.ts';

/** Messages per page at most (the spec's maxItems), and when no limit is given. */
export const MESSAGE_PAGE = { max: 500, default: 100 } as const;

export const listMessages =
  ({ store, bots, adminTokenHash }: AppDeps): Handler =>
  async (req, res) => {
    const id = pathParam(req, 'endpoint');
    const found = await store.endpoints.get(id);
    const actor = authenticate(req, found, { bots, adminTokenHash });
    if (!actor || !found) throw unauthorized();
    const { after = 0, limit = MESSAGE_PAGE.default, platform } = queryOf(req, 'listMessages');
    const refusal = platformRefusal(actingPlatform(actor), platform, 'platform');
    if (refusal) throw forbidden(refusal);
    // One more than listed: whether more follow is known without counting them.
    const messages = await store.messages.list(id, after, Math.min(limit, MESSAGE_PAGE.max) + 1, platform);
    const listed = messages.slice(0, limit);
    respond(res, 'listMessages').json(200, {
      messages: await currentItems(store, id, listed, platform),
      more: messages.length > listed.length,
      newest: found.state.seq,
    });
  };
