import { createEndpoint as provision, existingTokenProblem } from '../admin/endpoints.ts';
import { reservedIdProblem } from '../domain/reservedIds.ts';
import type { AppDeps } from '../http/deps.ts';
import type { Handler } from '../http/operations.ts';
import { respond } from '../http/respond.ts';
import { HttpProblem, invalid } from '../http/problem.ts';

export const createEndpoint =
  ({ store, logger }: AppDeps): Handler =>
  async (req, res) => {
    // The validator has checked both against the spec (the token's length and alphabet included).
    const { id, token } = req.body as { id: string; token?: string };
    const reserved = reservedIdProblem(id);
    if (reserved) throw invalid([{ parameter: 'id', in: 'body', message: reserved }]);
    const problem = token === undefined ? undefined : existingTokenProblem(token);
    if (problem) throw invalid([{ parameter: 'token', in: 'body', message: problem }]);
    const issued = await provision(store, id, token);
    if (!issued) throw new HttpProblem(409, 'An endpoint with this ID already exists.');
    logger.info({ endpoint: id, tokenSource: token === undefined ? 'issued' : 'migrated' }, 'endpoint created');
    respond(res, 'createEndpoint').json(201, issued);
  };
