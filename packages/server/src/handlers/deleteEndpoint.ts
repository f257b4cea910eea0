import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam } from '../http/operations.ts';
import { HttpProblem } from '../http/problem.ts';
import { respond } from '../http/respond.ts';

export const deleteEndpoint =
  ({ store, logger }: AppDeps): Handler =>
  async (req, res) => {
    const id = pathParam(req, 'endpoint');
    if (!(await store.endpoints.delete(id))) throw new HttpProblem(404, 'No endpoint has this ID.');
    logger.info({ endpoint: id }, 'endpoint deleted');
    respond(res, 'deleteEndpoint').empty(204);
  };
