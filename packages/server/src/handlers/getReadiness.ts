import type { AppDeps } from '../http/deps.ts';
import type { Handler } from '../http/operations.ts';
import { respond } from '../http/respond.ts';

const STORE_PING_TIMEOUT_MS = 1000;

function pingWithin(ping: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, ms, false)));
  return Promise.race([
    ping.then(
      () => true,
      () => false,
    ),
    timeout,
  ]).finally(() => clearTimeout(timer));
}

export const getReadiness =
  ({ store, readiness }: AppDeps): Handler =>
  async (_req, res) => {
    if (readiness.draining) return respond(res, 'getReadiness').json(503, { status: 'not_ready', checks: { server: 'draining' } });
    const storeOk = await pingWithin(store.ping(), STORE_PING_TIMEOUT_MS);
    if (!storeOk) return respond(res, 'getReadiness').json(503, { status: 'not_ready', checks: { store: 'unavailable' } });
    respond(res, 'getReadiness').json(200, { status: 'ready', checks: { store: 'ok' } });
  };
