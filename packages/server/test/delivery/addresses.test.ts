import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import {
  checkLiteralHost,
  classifyAddress,
  createGuardedLookup,
  FORBIDDEN_ADDRESS,
  ForbiddenAddressError,
  isForbiddenAddress,
  type Resolver,
} from '../../src/delivery/addresses.ts';

// Classification only: nothing here sends traffic.
const FORBIDDEN: [string, string][] = [
  // IPv4
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.254', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'linkLocal'], // cloud metadata
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['100.127.255.254', 'carrierGradeNat'],
  ['255.255.255.255', 'broadcast'],
  ['192.0.2.1', 'reserved'], // TEST-NET-1
  ['198.51.100.7', 'reserved'],
  ['203.0.113.9', 'reserved'],
  ['198.18.0.1', 'reserved'], // benchmarking
  ['240.0.0.1', 'reserved'],
  ['192.0.0.8', 'reserved'],
  // IPv6
  ['::1', 'loopback'],
  ['::', 'unspecified'],
  ['fe80::1', 'linkLocal'],
  ['fe80::1%eth0', 'linkLocal'],
  ['febf:ffff::1', 'linkLocal'],
  ['fc00::1', 'uniqueLocal'],
  ['fd12:3456:789a::1', 'uniqueLocal'],
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast'],
  ['fec0::1', 'deprecatedSiteLocal'],
  ['100::1', 'discard'],
  ['2001:db8::1', 'reserved'], // documentation
  ['2001:2::1', 'benchmarking'],
  ['::7f00:1', 'notGlobalUnicast'], // deprecated IPv4-compatible ::127.0.0.1
  ['::8.8.8.8', 'notGlobalUnicast'], // ::808:808, not ::ffff:8.8.8.8
  ['::127.0.0.1', 'notGlobalUnicast'],
  ['4000::1', 'notGlobalUnicast'], // outside 2000::/3
  // IPv6 embedding forbidden IPv4
  ['::ffff:127.0.0.1', 'ipv4Mapped:loopback'],
  ['::ffff:7f00:1', 'ipv4Mapped:loopback'],
  ['::ffff:10.1.2.3', 'ipv4Mapped:private'],
  ['::ffff:169.254.169.254', 'ipv4Mapped:linkLocal'],
  ['::ffff:0.0.0.0', 'ipv4Mapped:unspecified'],
  ['::ffff:0:192.168.0.1', 'rfc6145:private'],
  ['64:ff9b::127.0.0.1', 'rfc6052:loopback'], // NAT64
  ['64:ff9b::a00:1', 'rfc6052:private'],
  ['64:ff9b:1::8.8.8.8', 'rfc6052'], // local-use NAT64 prefix: forbidden outright
  ['2002:7f00:1::1', '6to4'], // 6to4 of 127.0.0.1
  ['2002:0808:0808::1', '6to4'], // 6to4 of 8.8.8.8: tunnels are forbidden outright
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
  // Not an address at all
  ['', 'invalid'],
  ['localhost', 'invalid'],
  ['999.1.1.1', 'invalid'],
  ['1.2.3.4.5', 'invalid'],
  ['2130706433', 'invalid'], // non-canonical IPv4 spellings are not addresses here
  ['0x7f.0.0.1', 'invalid'],
];

const ALLOWED = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '100.63.255.255', // just below 100.64/10
  '100.128.0.1', // just above
  '172.15.255.255', // just below 172.16/12
  '172.32.0.1', // just above
  '192.169.0.1',
  '2606:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001:82a::200e',
  '[2606:4700::1111]',
  '::ffff:8.8.8.8', // IPv4-mapped public
  '::ffff:0:1.1.1.1', // IPv4-translated public
  '64:ff9b::8.8.8.8', // NAT64 of a public address (DNS64 networks)
];

describe('isForbiddenAddress', () => {
  it.each(FORBIDDEN)('when the address is %s, then it is forbidden (%s)', (ip, range) => {
    expect(classifyAddress(ip)).toBe(range);
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  it.each(ALLOWED)('when the address is the public %s, then it is allowed', (ip) => {
    expect(classifyAddress(ip)).toBe('unicast');
    expect(isForbiddenAddress(ip)).toBe(false);
  });
});

describe('checkLiteralHost', () => {
  it('when the URL host is a forbidden IP literal, then an ERR_FORBIDDEN_ADDRESS error is returned', () => {
    for (const host of ['127.0.0.1', '[::1]', '[::ffff:7f00:1]', '169.254.169.254', '[fd00::1]']) {
      const error = checkLiteralHost(host, false);
      expect(error).toBeInstanceOf(ForbiddenAddressError);
      expect(error?.code).toBe(FORBIDDEN_ADDRESS);
    }
  });

  it('when the host is a public literal or a name, then nothing is returned (names are left to the lookup)', () => {
    expect(checkLiteralHost('8.8.8.8', false)).toBeUndefined();
    expect(checkLiteralHost('[2606:4700::1111]', false)).toBeUndefined();
    expect(checkLiteralHost('localhost', false)).toBeUndefined();
  });

  it('when allowPrivateWebhooks is true, then even loopback literals pass', () => {
    expect(checkLiteralHost('127.0.0.1', true)).toBeUndefined();
  });

  it('when URL parsing normalises odd IPv4 spellings, then the normalised literal is caught', () => {
    for (const url of ['https://2130706433/x', 'https://0x7f.1/x', 'https://0177.0.0.1/x']) {
      expect(checkLiteralHost(new URL(url).hostname, false)?.address).toBe('127.0.0.1');
    }
  });
});

type LookupResult = { err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family: number | undefined };

function lookupWith(allowPrivateWebhooks: boolean, resolve: Resolver | undefined, hostname: string, all: boolean): Promise<LookupResult> {
  const lookup = createGuardedLookup(resolve ? { allowPrivateWebhooks, resolve } : { allowPrivateWebhooks });
  return new Promise((done) => lookup(hostname, { all }, (err, address, family) => done({ err, address, family })));
}

const fixed =
  (addresses: LookupAddress[]): Resolver =>
  async () =>
    addresses;

describe('createGuardedLookup', () => {
  it('when a name resolves only to public addresses, then they are passed on (all: true and all: false forms)', async () => {
    const resolve = fixed([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
    const all = await lookupWith(false, resolve, 'hooks.example.com', true);
    expect(all.err).toBeNull();
    expect(all.address).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
    const one = await lookupWith(false, resolve, 'hooks.example.com', false);
    expect(one).toEqual({ err: null, address: '93.184.216.34', family: 4 });
  });

  it('when ANY resolved address is forbidden, then the lookup fails with ERR_FORBIDDEN_ADDRESS', async () => {
    const resolve = fixed([
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ]);
    for (const all of [true, false]) {
      const { err } = await lookupWith(false, resolve, 'rebind.example.com', all);
      expect(err).toBeInstanceOf(ForbiddenAddressError);
      expect(err?.code).toBe('ERR_FORBIDDEN_ADDRESS');
      expect(err?.message).toBe('Refusing to connect: rebind.example.com resolves to 10.0.0.5, which is not a public address (private)');
    }
  });

  it('when allowPrivateWebhooks is true, then private addresses are passed on', async () => {
    const { err, address } = await lookupWith(true, fixed([{ address: '10.0.0.5', family: 4 }]), 'intranet', false);
    expect(err).toBeNull();
    expect(address).toBe('10.0.0.5');
  });

  it('when the resolver fails, then its error is passed on unchanged', async () => {
    const failing: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nope.invalid'), { code: 'ENOTFOUND' });
    };
    const { err } = await lookupWith(false, failing, 'nope.invalid', true);
    expect(err?.code).toBe('ENOTFOUND');
  });

  it('when the resolver finds nothing, then the lookup fails with ENOTFOUND', async () => {
    const { err } = await lookupWith(false, fixed([]), 'empty.example.com', true);
    expect(err?.code).toBe('ENOTFOUND');
  });

  it('when the real system resolver resolves localhost, then it is refused as loopback', async () => {
    const { err } = await lookupWith(false, undefined, 'localhost', true);
    expect(err?.code).toBe('ERR_FORBIDDEN_ADDRESS');
    expect((err as ForbiddenAddressError).range).toBe('loopback');
  });

  it('when the real system resolver resolves localhost with allowPrivateWebhooks, then a loopback address is returned', async () => {
    const { err, address } = await lookupWith(true, undefined, 'localhost', false);
    expect(err).toBeNull();
    expect(['127.0.0.1', '::1']).toContain(address);
  });
});
