import { rotateBotKey as rotate } from '../admin/bots.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam } from '../http/operations.ts';
import { respond } from '../http/respond.ts';
import { HttpProblem } from '../http/problem.ts';

export const rotateBotKey =
  ({ store, bots, events, logger }: AppDeps): Handler =>
  async (req, res) => {
    const id = pathParam(req, 'bot');
    const issued = await rotate(store, id);
    if (!issued) throw new HttpProblem(404, 'No bot has this ID.');
    // The old key stops opening anything on this instance now, and what it opened ends.
    bots.invalidate();
    events.endBot(id);
    logger.info({ bot: id }, 'bot key rotated');
    respond(res, 'rotateBotKey').json(200, issued);
  };
