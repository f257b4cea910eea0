import { authenticateBot, presentsAdminToken } from '../http/authenticate.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, queryOf, reply } from '../http/operations.ts';
import { HttpProblem, KEY_OR_ADMIN_UNAUTHORIZED_DETAIL } from '../http/problem.ts';

/** Matches listed per answer (the spec's maxItems); past it the answer says `truncated`. */
export const LOOKUP_MAX_MATCHES = 100;

export const lookupEndpoints =
  ({ store, bots, adminTokenHash }: AppDeps): Handler =>
  async (req, res) => {
    // A bot key of any platform may look up any platform's channel: a bot relays between platforms.
    if (!authenticateBot(req, bots) && !presentsAdminToken(req, adminTokenHash))
      throw new HttpProblem(401, KEY_OR_ADMIN_UNAUTHORIZED_DETAIL);
    const { platform, channel } = queryOf(req, 'lookupEndpoints');
    // One more than listed: whether there are more is known without counting them all.
    const found = await store.lookupChannel(platform, channel, LOOKUP_MAX_MATCHES + 1);
    reply(res, 'lookupEndpoints', 200, { matches: found.slice(0, LOOKUP_MAX_MATCHES), truncated: found.length > LOOKUP_MAX_MATCHES });
  };
