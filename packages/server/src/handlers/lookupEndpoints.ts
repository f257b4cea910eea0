import { takesPart } from '../domain/botRights.ts';
import type { Platform } from '../domain/record.ts';
import { authenticateBot, presentsAdminToken } from '../http/auth/authenticate.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, queryOf } from '../http/operations.ts';
import { respond } from '../http/respond.ts';
import { HttpProblem, KEY_OR_ADMIN_UNAUTHORIZED_DETAIL } from '../http/problem.ts';
import type { ChannelMatch, EndpointStore } from '../store/port.ts';

/** Matches listed per answer (the spec's maxItems); past it the answer says `truncated`. */
export const LOOKUP_MAX_MATCHES = 100;
/**
 * Matches of another platform's channel read for a bot key before keeping those where its platform
 * takes part: a bound on the work of one lookup, and past it the answer says `truncated`.
 */
export const LOOKUP_MAX_SCANNED = 1000;

/** The matches on endpoints where `platform` takes part, each endpoint's record read once. */
async function whereTakingPart(store: EndpointStore, matches: ChannelMatch[], platform: Platform): Promise<ChannelMatch[]> {
  const ids = [...new Set(matches.map((m) => m.endpoint))];
  const rows = await Promise.all(ids.map((id) => store.endpoints.get(id)));
  const taking = new Set(ids.filter((_, i) => rows[i] !== undefined && takesPart(rows[i]!.record, platform)));
  return matches.filter((m) => taking.has(m.endpoint));
}

export const lookupEndpoints =
  ({ store, bots, adminTokenHash }: AppDeps): Handler =>
  async (req, res) => {
    // A bot key may look up any platform's channel (a bot relays between platforms), and finds only
    // endpoints where its own platform takes part; the admin token finds every endpoint.
    const bot = authenticateBot(req, bots);
    if (!bot && !presentsAdminToken(req, adminTokenHash)) throw new HttpProblem(401, KEY_OR_ADMIN_UNAUTHORIZED_DETAIL);
    const { platform, channel } = queryOf(req, 'lookupEndpoints');
    // A channel of the key's own platform lies on endpoints where that platform takes part: no filter.
    if (!bot || bot.platform === platform) {
      // One more than listed: whether there are more is known without counting them all.
      const found = await store.endpoints.lookupChannel(platform, channel, LOOKUP_MAX_MATCHES + 1);
      return respond(res, 'lookupEndpoints').json(200, {
        matches: found.slice(0, LOOKUP_MAX_MATCHES),
        truncated: found.length > LOOKUP_MAX_MATCHES,
      });
    }
    const scanned = await store.endpoints.lookupChannel(platform, channel, LOOKUP_MAX_SCANNED);
    const found = await whereTakingPart(store, scanned, bot.platform);
    respond(res, 'lookupEndpoints').json(200, {
      matches: found.slice(0, LOOKUP_MAX_MATCHES),
      truncated: found.length > LOOKUP_MAX_MATCHES || scanned.length === LOOKUP_MAX_SCANNED,
    });
  };
