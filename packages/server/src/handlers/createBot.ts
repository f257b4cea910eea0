import { createBot as provision, MAX_BOTS } from '../admin/bots.ts';
import type { Platform } from '../domain/record.ts';
import type { AppDeps } from '../http/deps.ts';
import type { Handler } from '../http/operations.ts';
import { respond } from '../http/respond.ts';
import { HttpProblem } from '../http/problem.ts';

export const createBot =
  ({ store, bots, logger }: AppDeps): Handler =>
  async (req, res) => {
    // The validator has checked both against the spec.
    const { id, platform } = req.body as { id: string; platform: Platform };
    const outcome = await provision(store, id, platform);
    if (outcome.kind === 'taken') throw new HttpProblem(409, 'A bot with this ID already exists.');
    if (outcome.kind === 'full') throw new HttpProblem(409, `The service has its ${MAX_BOTS} bots; delete one first.`);
    bots.invalidate();
    logger.info({ bot: id, platform }, 'bot created');
    respond(res, 'createBot').json(201, outcome.issued);
  };
