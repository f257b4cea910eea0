import { createEndpoint as provision } from '../admin/endpoints.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, reply } from '../http/operations.ts';
import { HttpProblem } from '../http/problem.ts';

export const createEndpoint =
  ({ store, logger }: AppDeps): Handler =>
  async (req, res) => {
    const { id } = req.body as { id: string };
    const issued = await provision(store, id);
    if (!issued) throw new HttpProblem(409, 'An endpoint with this ID already exists.');
    logger.info({ endpoint: id }, 'endpoint created');
    reply(res, 'createEndpoint', 201, issued);
  };
