import { listBots as list } from '../admin/bots.ts';
import type { AppDeps } from '../http/deps.ts';
import type { Handler } from '../http/operations.ts';
import { respond } from '../http/respond.ts';

export const listBots =
  ({ store }: AppDeps): Handler =>
  async (_req, res) => {
    respond(res, 'listBots').json(200, await list(store));
  };
