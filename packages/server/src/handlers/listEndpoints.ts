import { listEndpointIds } from '../admin/endpoints.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, reply } from '../http/operations.ts';

export const listEndpoints =
  ({ store }: AppDeps): Handler =>
  async (req, res) => {
    const { limit = 100, cursor } = req.query as { limit?: number; cursor?: string };
    reply(res, 'listEndpoints', 200, await listEndpointIds(store, cursor, limit));
  };
