// The save-time check of a target URL: literal addresses and schemes refused by the guard's rules, a
// name resolving only to non-public addresses refused, a name that does not resolve (or not in time)
// saved (every attempt checks again on the address it connects to). The resolver is injected as the
// guard's own tests do (no DNS server here).
import type { Lookup } from '@mailer/outbound';
import { guardTargetCheck } from '../src/app/target-check';

const production = { allowHttp: false, allowedCidrs: [] };
const resolvesTo = (...addresses: string[]): Lookup => (_host, _opts, cb) => cb(null, addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
const notFound: Lookup = (_host, _opts, cb) => cb(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }), []);
const never: Lookup = () => undefined;

it('refuses schemes, credentials and literal non-public addresses before any lookup', async () => {
  const check = guardTargetCheck(production, { lookup: resolvesTo('93.184.216.34') });
  for (const url of ['http://hooks.example.com/x', 'ftp://hooks.example.com/', 'https://u:p@hooks.example.com/', 'https://127.0.0.1/', 'https://[::1]/', 'https://169.254.169.254/', 'https://localhost/']) {
    expect([url, (await check(url)).ok]).toEqual([url, false]);
  }
});

it('refuses a name that resolves only to non-public addresses, accepts one with a public address', async () => {
  expect(await guardTargetCheck(production, { lookup: resolvesTo('10.0.0.5', '192.168.1.1') })('https://internal.example.com/hook')).toMatchObject({ ok: false });
  expect(await guardTargetCheck(production, { lookup: resolvesTo('93.184.216.34') })('https://hooks.example.com/hook')).toMatchObject({ ok: true });
  // The operator's ranges are allowed.
  expect(await guardTargetCheck({ allowHttp: false, allowedCidrs: ['10.0.0.0/8'] }, { lookup: resolvesTo('10.0.0.5') })('https://internal.example.com/hook')).toMatchObject({ ok: true });
});

it('saves a name that does not resolve, or not within the timeout', async () => {
  expect(await guardTargetCheck(production, { lookup: notFound })('https://not-yet.example.com/hook')).toMatchObject({ ok: true });
  const started = Date.now();
  expect(await guardTargetCheck(production, { lookup: never, timeoutMs: 100 })('https://slow.example.com/hook')).toMatchObject({ ok: true });
  expect(Date.now() - started).toBeLessThan(5_000);
});
