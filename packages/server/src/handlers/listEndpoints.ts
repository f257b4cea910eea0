import { listEndpointIds } from '../admin/endpoints.ts';
import type { AppDeps } from '../http/deps.ts';
import type { Handler } from '../http/operations.ts';
import { respond } from '../http/respond.ts';

export const listEndpoints =
  ({ store }: AppDeps): Handler =>
  async (req, res) => {
    const { limit = 100, cursor } = req.query as { limit?: number; cursor?: string };
    respond(res, 'listEndpoints').json(200, await listEndpointIds(store, cursor, limit));
  };
