import { listBots as list } from '../admin/bots.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, reply } from '../http/operations.ts';

export const listBots =
  ({ store }: AppDeps): Handler =>
  async (_req, res) => {
    reply(res, 'listBots', 200, await list(store));
  };
