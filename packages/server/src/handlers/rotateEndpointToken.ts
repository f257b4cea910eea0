import { rotateEndpointToken as rotate } from '../admin/endpoints.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam } from '../http/operations.ts';
import { respond } from '../http/respond.ts';
import { HttpProblem } from '../http/problem.ts';

export const rotateEndpointToken =
  ({ store, logger }: AppDeps): Handler =>
  async (req, res) => {
    const id = pathParam(req, 'endpoint');
    const issued = await rotate(store, id);
    if (!issued) throw new HttpProblem(404, 'No endpoint has this ID.');
    logger.info({ endpoint: id }, 'endpoint token rotated');
    respond(res, 'rotateEndpointToken').json(200, issued);
  };
