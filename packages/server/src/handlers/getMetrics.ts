import type { AppDeps } from '../http/deps.ts';
import type { Handler } from '../http/operations.ts';

export const getMetrics =
  ({ metrics }: AppDeps): Handler =>
  async (_req, res) => {
    res
      .status(200)
      .type(metrics.registry.contentType)
      .send(await metrics.registry.metrics());
  };
