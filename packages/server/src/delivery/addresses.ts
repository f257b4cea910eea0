// SSRF guard for webhook delivery: webhook URLs come from bots, so a URL must never make the server
// talk to itself, its network or cloud metadata services. Which addresses are allowed is the pure rule
// in domain/addressRanges.ts; this module applies it where connections are made:
// - in the DNS lookup used by the very connection that is made (so a name cannot resolve to a public
//   address for a check and to a private one for the connection: no DNS-rebinding window), and on the
//   URL host itself when it is an IP literal, because net.connect does not call `lookup` for IP
//   literals. A name is refused when ANY of its addresses is forbidden (connections may try every
//   address).
// - `allowPrivateWebhooks` (CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE, development only) turns every check off.
import dns from 'node:dns';
import type net from 'node:net';
import { classifyAddress, literalHostRange } from '../domain/addressRanges.ts';

export { classifyAddress, isForbiddenAddress } from '../domain/addressRanges.ts';

export const FORBIDDEN_ADDRESS = 'ERR_FORBIDDEN_ADDRESS';

/** A connection was refused because the host is, or resolves to, a forbidden address. No URL inside. */
export class ForbiddenAddressError extends Error {
  readonly code = FORBIDDEN_ADDRESS;
  readonly hostname: string;
  readonly address: string;
  readonly range: string;

  constructor(hostname: string, address: string, range: string) {
    const subject = hostname === address ? `address ${address}` : `${hostname} resolves to ${address}, which`;
    super(`Refusing to connect: ${subject} is not a public address (${range})`);
    this.name = 'ForbiddenAddressError';
    this.hostname = hostname;
    this.address = address;
    this.range = range;
  }
}

/**
 * For a URL hostname that is an IP literal ("127.0.0.1", "[::1]"), the error to refuse it with;
 * undefined for allowed literals and for names (names are checked by the guarded lookup).
 */
export function checkLiteralHost(hostname: string, allowPrivateWebhooks: boolean): ForbiddenAddressError | undefined {
  if (allowPrivateWebhooks) return undefined;
  const range = literalHostRange(hostname);
  if (range === undefined || range === 'unicast') return undefined;
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return new ForbiddenAddressError(bare, bare, range);
}

/** Resolves every address of a name; the default is dns.lookup with `all: true`. */
export type Resolver = (hostname: string, options: dns.LookupOptions) => Promise<dns.LookupAddress[]>;

const systemResolver: Resolver = (hostname, options) => dns.promises.lookup(hostname, { ...options, all: true });

/**
 * A `lookup` for net.connect / tls.connect / undici's `connect.lookup`: resolves with dns.lookup
 * (all addresses) and fails with a ForbiddenAddressError (code ERR_FORBIDDEN_ADDRESS) when any of them
 * is forbidden, unless `allowPrivateWebhooks`. Honours `options.all` (Node asks for every address when it
 * races IPv4 and IPv6, autoSelectFamily) and otherwise answers with the first address.
 */
export function createGuardedLookup(options: { allowPrivateWebhooks: boolean; resolve?: Resolver }): net.LookupFunction {
  const resolve = options.resolve ?? systemResolver;
  return (hostname, lookupOptions, callback) => {
    const { all, ...rest } = lookupOptions;
    resolve(hostname, rest).then(
      (addresses) => {
        let error: NodeJS.ErrnoException | undefined;
        if (addresses.length === 0) {
          error = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
        } else if (!options.allowPrivateWebhooks) {
          for (const { address } of addresses) {
            const range = classifyAddress(address);
            if (range !== 'unicast') {
              error = new ForbiddenAddressError(hostname, address, range);
              break;
            }
          }
        }
        // Outside the promise chain, so an exception in the caller's callback is not swallowed.
        process.nextTick(() => {
          if (error) callback(error, all ? [] : '', undefined);
          else if (all) callback(null, addresses);
          else callback(null, addresses[0]!.address, addresses[0]!.family);
        });
      },
      (error: NodeJS.ErrnoException) => process.nextTick(() => callback(error, all ? [] : '', undefined)),
    );
  };
}
