// The contract tests' record of what the typed client exchanged with a target: each answer, with the
// operation it belongs to, so it can be checked against the spec.
import { capture, type CapturedResponse } from './spec.ts';

export interface Exchange extends CapturedResponse {
  method: string;
  path: string;
}

/** The operation a request addresses, from its method and path. */
export function operationOf({ method, path }: Pick<Exchange, 'method' | 'path'>): string {
  if (path === '/-/live') return 'getLiveness';
  if (path === '/-/ready') return 'getReadiness';
  if (path === '/admin/endpoints') return method === 'POST' ? 'createEndpoint' : 'listEndpoints';
  if (path.startsWith('/admin/endpoints/')) return path.endsWith('/token') ? 'rotateEndpointToken' : 'deleteEndpoint';
  if (path === '/admin/bots') return method === 'POST' ? 'createBot' : 'listBots';
  if (path.startsWith('/admin/bots/')) return path.endsWith('/key') ? 'rotateBotKey' : 'deleteBot';
  if (path.startsWith('/read/')) return 'markRead';
  if (path === '/lookup') return 'lookupEndpoints';
  if (path.startsWith('/messages/')) {
    if (path.endsWith('/find')) return 'getMessage';
    if (path.endsWith('/edit')) return 'editMessage';
    return path.endsWith('/delete') ? 'deleteMessage' : 'listMessages';
  }
  if (path.startsWith('/events/')) return 'streamEndpointEvents';
  if (path.startsWith('/remove/')) return 'removeFromEndpoint';
  return path.startsWith('/update/') ? 'updateEndpoint' : 'getEndpoint';
}

/**
 * A fetch that records every answer in `exchanges` (a clone is read; the client reads the original).
 * Event streams are left alone: they do not end.
 */
export function recording(exchanges: Exchange[]) {
  return async (request: Request): Promise<Response> => {
    const response = await fetch(request);
    if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
      exchanges.push({ method: request.method, path: new URL(request.url).pathname, ...(await capture(response.clone())) });
    }
    return response;
  };
}
