// Connection limits: every open connection holds a file descriptor and some memory, and one client
// can open thousands (each kept alive for 65 s by one cheap request). Past the total, new
// connections are closed at once, so the process keeps descriptors for its store, its webhook
// deliveries and its health probes' next chance; past the per-address cap, that address's new ones
// are, so one address cannot fill the total for everyone. The cap sits far above what a bot host
// opens (a handful of keep-alive connections per community it serves, and far fewer with pooling).
// A trusted proxy's connections (CHATBRIDGE_TRUST_PROXY) carry many clients each and are not capped
// per address; the proxy is the place to limit its clients.
import type { Server } from 'node:http';

export interface ConnectionLimits {
  /** Connections open at once, in all (0: no limit). */
  max: number;
  /** Connections open at once from one client address, as the socket sees it (0: no limit). */
  perAddress: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { max: 10_000, perAddress: 1_000 };

/**
 * `exempt`: addresses whose connections are not capped per address (the trusted proxies).
 */
export function limitConnections(server: Server, limits: ConnectionLimits, exempt: (address: string) => boolean = () => false): void {
  if (limits.max > 0) server.maxConnections = limits.max; // Node closes the ones over it
  if (limits.perAddress <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket) => {
    const address = socket.remoteAddress ?? '';
    if (exempt(address)) return;
    const count = (open.get(address) ?? 0) + 1;
    if (count > limits.perAddress) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = open.get(address)! - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
