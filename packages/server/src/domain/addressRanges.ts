// Which IP addresses may receive webhooks: a pure rule, used when an update names a webhook URL
// (address literals are refused at once) and when delivery connects (every resolved address).
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
import net from 'node:net';
import ipaddr from 'ipaddr.js';

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
 * For a URL hostname that is an IP literal ("127.0.0.1", "[::1]"), its range (see classifyAddress);
 * undefined for names, which only a DNS lookup can judge.
 */
export function literalHostRange(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return net.isIP(bare) === 0 ? undefined : classifyAddress(bare);
}
