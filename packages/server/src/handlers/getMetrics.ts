import type { AppDeps } from '../http/deps.ts';
import type { Handler } from '../http/operations.ts';
import { respond } from '../http/respond.ts';

export const getMetrics =
  ({ metrics }: AppDeps): Handler =>
  async (_req, res) => {
    respond(res, 'getMetrics').text(200, metrics.registry.contentType, await metrics.registry.metrics());
  };
