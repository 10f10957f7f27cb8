import type { LookupAddress } from 'node:dns';
import { addressPolicy, checkTarget, checkUrl, outboundSettings, type Lookup, type OutboundSettings } from '../src';

// What the guard lets through without touching the network: settings, URL rules, address ranges.
const PRODUCTION: OutboundSettings = { allowHttp: false, allowedCidrs: [] };
const LOCAL: OutboundSettings = { allowHttp: true, allowedCidrs: ['127.0.0.0/8', '::1/128'] };

describe('outboundSettings (docs/configuration.md)', () => {
  it('defaults to the production guard: https only, no exceptions', () => {
    expect(outboundSettings({})).toEqual({ allowHttp: false, allowedCidrs: [] });
  });

  it('reads the local runner values', () => {
    expect(outboundSettings({ OUTBOUND_ALLOW_HTTP: 'true', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8, ::1/128' })).toEqual(LOCAL);
    expect(outboundSettings({ OUTBOUND_ALLOW_HTTP: 'false', OUTBOUND_ALLOWED_CIDRS: '' })).toEqual(PRODUCTION);
  });

  it('refuses malformed values instead of silently running another guard', () => {
    expect(() => outboundSettings({ OUTBOUND_ALLOW_HTTP: 'maybe' })).toThrow(/OUTBOUND_ALLOW_HTTP/);
    expect(() => outboundSettings({ OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8,localhost' })).toThrow(/OUTBOUND_ALLOWED_CIDRS.*localhost/);
    expect(() => outboundSettings({ OUTBOUND_ALLOWED_CIDRS: '10.0.0.0/33' })).toThrow(/OUTBOUND_ALLOWED_CIDRS/);
  });
});

describe('address policy', () => {
  const production = addressPolicy(PRODUCTION);

  it.each([
    ['8.8.8.8', 'public IPv4'],
    ['93.184.215.14', 'public IPv4'],
    ['2606:4700:4700::1111', 'public IPv6'],
    ['::ffff:8.8.8.8', 'IPv4-mapped public'],
    ['2002:808:808::1', '6to4 of a public IPv4'],
    ['64:ff9b::808:808', 'NAT64 of a public IPv4'],
  ])('allows %s (%s)', (address) => {
    expect(production.allows(address)).toBe(true);
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.10.10', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['168.63.129.16', 'Azure platform endpoint'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['fe80::1', 'IPv6 link-local'],
    ['fc00::1', 'unique-local'],
    ['fd00:ec2::254', 'metadata IPv6'],
    ['ff02::1', 'IPv6 multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::127.0.0.1', 'IPv4-compatible (deprecated)'],
    ['2002:7f00:1::', '6to4 of loopback'],
    ['2002:a00:1::', '6to4 of a private address'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo whose client is 127.0.0.1'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of metadata'],
    ['2001:db8::1', 'documentation IPv6'],
    ['not-an-address', 'not an address'],
  ])('refuses %s (%s)', (address) => {
    expect(production.allows(address)).toBe(false);
  });

  it('lets the operator ranges through, including the IPv4-mapped form of an allowed IPv4', () => {
    const local = addressPolicy(LOCAL);
    expect(local.allows('127.0.0.1')).toBe(true);
    expect(local.allows('::1')).toBe(true);
    expect(local.allows('::ffff:127.0.0.1')).toBe(true);
    expect(local.allows('10.0.0.1')).toBe(false);
    expect(local.allows('169.254.169.254')).toBe(false);
    const cluster = addressPolicy({ allowHttp: false, allowedCidrs: ['10.20.0.0/16', '169.254.169.254'] });
    expect(cluster.allows('10.20.3.4')).toBe(true);
    expect(cluster.allows('10.21.3.4')).toBe(false);
    expect(cluster.allows('169.254.169.254')).toBe(true);
  });
});

describe('checkUrl (save-time validation, no DNS)', () => {
  it('accepts https URLs with a name or a public address', () => {
    const r = checkUrl('https://hooks.example.com/in?x=1', PRODUCTION);
    expect(r.ok && r.url.href).toBe('https://hooks.example.com/in?x=1');
    expect(checkUrl('https://8.8.8.8/x', PRODUCTION).ok).toBe(true);
    expect(checkUrl('https://[2606:4700:4700::1111]:8443/x', PRODUCTION).ok).toBe(true);
  });

  it('refuses http unless the operator allows it', () => {
    expect(checkUrl('http://hooks.example.com/in', PRODUCTION)).toMatchObject({ ok: false, code: 'url_not_allowed', reason: 'the URL must use https' });
    expect(checkUrl('http://hooks.example.com/in', { ...PRODUCTION, allowHttp: true }).ok).toBe(true);
  });

  it.each(['not a url', '/relative/path', 'ftp://example.com/x', 'file:///etc/passwd', 'javascript:alert(1)', 'https://user:pw@example.com/'])(
    'refuses %s as url_not_allowed',
    (url) => {
      expect(checkUrl(url, LOCAL)).toMatchObject({ ok: false, code: 'url_not_allowed' });
    },
  );

  it.each([
    'https://127.0.0.1/',
    'https://2130706433/', // decimal 127.0.0.1
    'https://0x7f.1/', // hex/short 127.0.0.1
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:a9fe:a9fe]/',
    'https://169.254.169.254/latest/meta-data/',
    'https://10.0.0.1/',
    'https://localhost/',
    'https://api.localhost/',
    'https://LOCALHOST./',
  ])('refuses %s as address_not_allowed in production', (url) => {
    expect(checkUrl(url, PRODUCTION)).toMatchObject({ ok: false, code: 'address_not_allowed' });
  });

  it('accepts loopback URLs with the local runner settings', () => {
    for (const url of ['http://127.0.0.1:4000/hook', 'http://[::1]:4000/hook', 'http://localhost:4000/hook', 'http://[::ffff:127.0.0.1]:4000/']) {
      expect(checkUrl(url, LOCAL).ok).toBe(true);
    }
    expect(checkUrl('http://10.0.0.1/', LOCAL)).toMatchObject({ ok: false, code: 'address_not_allowed' });
  });
});

describe('checkTarget (save time, with DNS)', () => {
  const answering =
    (...addresses: string[]): Lookup =>
    (_host, _opts, cb) =>
      cb(null, addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })));

  it('refuses a name that resolves only to non-public addresses', async () => {
    expect(await checkTarget('https://evil.example/', PRODUCTION, { lookup: answering('127.0.0.1', '::1') })).toMatchObject({
      ok: false,
      code: 'address_not_allowed',
    });
    expect(await checkTarget('https://evil.example/', PRODUCTION, { lookup: answering('169.254.169.254') })).toMatchObject({ ok: false });
  });

  it('accepts a name with a public address (the non-public ones are never connected to)', async () => {
    expect((await checkTarget('https://hooks.example/', PRODUCTION, { lookup: answering('93.184.215.14') })).ok).toBe(true);
    expect((await checkTarget('https://hooks.example/', PRODUCTION, { lookup: answering('10.0.0.1', '93.184.215.14') })).ok).toBe(true);
  });

  it('reports a name that does not resolve as dns_failed, and URL errors before any lookup', async () => {
    const failing: Lookup = (_h, _o, cb) => cb(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }), []);
    expect(await checkTarget('https://nowhere.invalid/', PRODUCTION, { lookup: failing })).toMatchObject({ ok: false, code: 'dns_failed' });
    const never: Lookup = () => {
      throw new Error('must not resolve');
    };
    expect(await checkTarget('http://hooks.example/', PRODUCTION, { lookup: never })).toMatchObject({ ok: false, code: 'url_not_allowed' });
  });
});
