// SSRF guard for webhook delivery: webhook URLs come from bots, so a URL must never make the server
// talk to itself, its network or cloud metadata services.
//
// Decisions:
// - Only global unicast is allowed. An IPv4 address is allowed only when ipaddr.js classifies it as
//   'unicast' (so loopback 127/8, private 10/8 172.16/12 192.168/16, link-local 169.254/16 (cloud
//   metadata), carrier-grade NAT 100.64/10, unspecified 0/8, broadcast, multicast 224/4, reserved and
//   documentation/benchmark ranges incl. 240/4, AS112 and AMT are forbidden). An IPv6 address is
//   allowed only when ipaddr.js classifies it as 'unicast' AND it lies in 2000::/3, the only block
//   IANA allocates as global unicast: this also forbids loopback ::1, unspecified ::, link-local
//   fe80::/10, unique-local fc00::/7, site-local fec0::/10, multicast ff00::/8, discard 100::/64, the
//   deprecated IPv4-compatible ::a.b.c.d, and every reserved or special 2001::/23 range.
// - IPv6 forms that embed an IPv4 address are judged by that IPv4 address: IPv4-mapped
//   ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d (RFC 6145), and the well-known NAT64 prefix
//   64:ff9b::/96 (RFC 6052; DNS64 networks return these for IPv4-only hosts, so they must keep working).
//   The local-use NAT64 prefix 64:ff9b:1::/48, 6to4 2002::/16 and Teredo 2001::/32 are forbidden
//   outright: they are tunnelling mechanisms no webhook host needs, and they can reach embedded IPv4
//   addresses through relays we cannot see.
// - Anything that is not a canonical IPv4 dotted quad or an IPv6 address (net.isIP) is forbidden (fail
//   closed); URL hosts are already normalised by the URL parser ("https://2130706433/" has the host
//   127.0.0.1), and resolved addresses come from getaddrinfo in canonical form.
// - Where it is checked: in the DNS lookup used by the very connection that is made (so a name cannot
//   resolve to a public address for a check and to a private one for the connection: no DNS-rebinding
//   window), and on the URL host itself when it is an IP literal, because net.connect does not call
//   `lookup` for IP literals. A name is refused when ANY of its addresses is forbidden (connections
//   may try every address).
// - `allowPrivateWebhooks` (CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE, development only) turns every check off.
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

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

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

function lastFourBytes(address: ipaddr.IPv6): ipaddr.IPv4 {
  const bytes = address.toByteArray();
  return new ipaddr.IPv4(bytes.slice(12));
}

/**
 * The address as WHATWG URL serialises it (hex groups only, zone ID dropped): ipaddr.js would read the
 * deprecated IPv4-compatible "::a.b.c.d" as IPv4-mapped "::ffff:a.b.c.d", a different address.
 */
function canonicalIPv6(text: string): string {
  const bare = text.replace(/%.*$/, '');
  return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
}

/**
 * The range an address falls in: 'unicast' for an allowed address, otherwise the reason it is
 * forbidden (an ipaddr.js range name, "ipv4Mapped:private" style for embedded IPv4, 'notGlobalUnicast',
 * or 'invalid').
 */
export function classifyAddress(ip: string): string {
  const text = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const family = net.isIP(text);
  if (family === 4) return ipaddr.IPv4.parse(text).range();
  if (family !== 6) return 'invalid';

  let v6: ipaddr.IPv6;
  try {
    v6 = ipaddr.IPv6.parse(canonicalIPv6(text));
  } catch {
    return 'invalid';
  }
  const range = v6.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || (range === 'rfc6052' && v6.match(NAT64_WELL_KNOWN))) {
    const embedded = lastFourBytes(v6).range();
    return embedded === 'unicast' ? 'unicast' : `${range}:${embedded}`;
  }
  if (range !== 'unicast') return range;
  return v6.match(GLOBAL_UNICAST_V6) ? 'unicast' : 'notGlobalUnicast';
}

/** Whether delivery must never connect to `ip` (IPv4, IPv6, bracketed IPv6; unparsable counts as forbidden). */
export function isForbiddenAddress(ip: string): boolean {
  return classifyAddress(ip) !== 'unicast';
}

/**
 * For a URL hostname that is an IP literal ("127.0.0.1", "[::1]"), the error to refuse it with;
 * undefined for allowed literals and for names (names are checked by the guarded lookup).
 */
export function checkLiteralHost(hostname: string, allowPrivateWebhooks: boolean): ForbiddenAddressError | undefined {
  if (allowPrivateWebhooks) return undefined;
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (net.isIP(bare) === 0) return undefined;
  const range = classifyAddress(bare);
  return range === 'unicast' ? undefined : new ForbiddenAddressError(bare, bare, range);
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
