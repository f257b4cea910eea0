import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam } from '../http/operations.ts';
import { HttpProblem } from '../http/problem.ts';
import { respond } from '../http/respond.ts';

export const deleteBot =
  ({ store, bots, events, logger }: AppDeps): Handler =>
  async (req, res) => {
    const id = pathParam(req, 'bot');
    if (!(await store.bots.delete(id))) throw new HttpProblem(404, 'No bot has this ID.');
    bots.invalidate();
    events.endBot(id);
    logger.info({ bot: id }, 'bot deleted');
    respond(res, 'deleteBot').empty(204);
  };
