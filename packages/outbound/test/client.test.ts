import type { LookupAddress } from 'node:dns';
import { createOutbound, OutboundError, type Lookup, type Outbound, type OutboundSettings, checkTarget } from '../src';
import { BIG, CERT, SLOW_MS, closedPort, startReceiver, type Receiver } from './receiver';

// The guard against real HTTP(S) receivers on loopback: what passes with the local runner's
// exceptions, what the production guard refuses before a byte reaches the receiver, and the caps.
const PRODUCTION: OutboundSettings = { allowHttp: false, allowedCidrs: [] };
const LOCAL: OutboundSettings = { allowHttp: true, allowedCidrs: ['127.0.0.0/8', '::1/128'] };
const HTTP_ONLY: OutboundSettings = { allowHttp: true, allowedCidrs: [] };

const answer = (address: string): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 });
const resolvingTo =
  (...addresses: string[]): Lookup =>
  (_host, _opts, cb) =>
    cb(null, addresses.map(answer));

const clients: Outbound[] = [];
const client = (settings: OutboundSettings, opts: Parameters<typeof createOutbound>[1] = {}) => {
  const c = createOutbound(settings, opts);
  clients.push(c);
  return c;
};
const failure = async (p: Promise<unknown>): Promise<OutboundError> => {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(OutboundError);
    return err as OutboundError;
  }
  throw new Error('expected the request to fail');
};

let receiver: Receiver;
beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await receiver.close();
});

describe('loopback receivers and the local runner exceptions', () => {
  it('delivers a POST with headers and body and returns status, headers, body and duration', async () => {
    const res = await client(LOCAL).request(`${receiver.origin}/hook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1' },
      body: '{"a":1}',
    });
    expect(res.status).toBe(200);
    expect(res.headers['x-seen-method']).toBe('POST');
    expect(res.body.toString()).toBe('ok POST {"a":1}');
    expect(res.truncated).toBe(false);
    expect(res.durationMs).toBeGreaterThanOrEqual(0);
    expect(receiver.hits).toEqual([expect.objectContaining({ method: 'POST', path: '/hook', body: '{"a":1}' })]);
  });

  it('refuses the same receiver without the exceptions, before any request reaches it', async () => {
    const http = client(HTTP_ONLY);
    for (const url of [`${receiver.origin}/hook`, `http://localhost:${receiver.port}/hook`]) {
      const err = await failure(http.request(url, { method: 'POST', body: 'x' }));
      expect(err.code).toBe('address_not_allowed');
      expect(err.message).not.toContain('127.0.0.1'); // customer-facing: names the rule, not our network
    }
    // a name that resolves to loopback is refused at connect time
    const named = client(HTTP_ONLY, { lookup: resolvingTo('127.0.0.1') });
    expect((await failure(named.request(`http://hooks.example.com:${receiver.port}/hook`))).code).toBe('address_not_allowed');
    expect(receiver.hits).toEqual([]);
  });

  it('connects only to the allowed addresses of a name that resolves to several', async () => {
    const c = client(LOCAL, { lookup: resolvingTo('10.0.0.1', '169.254.169.254', '127.0.0.1') });
    const res = await c.request(`http://hooks.example.com:${receiver.port}/hook`);
    expect(res.status).toBe(200);
    expect(receiver.hits[0].host).toBe(`hooks.example.com:${receiver.port}`); // the name is kept (Host, SNI)
  });
});

describe('DNS rebinding', () => {
  it('checks the address actually connected to, not the one seen at save time', async () => {
    let calls = 0;
    // public the first time (the save-time check), loopback afterwards (the delivery)
    const rebinding: Lookup = (_host, _opts, cb) => cb(null, [answer(++calls === 1 ? '93.184.215.14' : '127.0.0.1')]);
    const url = `http://rebind.example.com:${receiver.port}/hook`;
    expect(await checkTarget(url, HTTP_ONLY, { lookup: rebinding })).toMatchObject({ ok: true });
    const err = await failure(client(HTTP_ONLY, { lookup: rebinding }).request(url, { method: 'POST', body: 'secret data' }));
    expect(err.code).toBe('address_not_allowed');
    expect(calls).toBe(2);
    expect(receiver.hits).toEqual([]);
  });

  it('resolves again for every new connection (a keep-alive agent does not cache the first answer)', async () => {
    let calls = 0;
    const rebinding: Lookup = (_host, _opts, cb) => cb(null, [answer(++calls === 1 ? '127.0.0.1' : '10.0.0.1')]);
    const c = client({ allowHttp: true, allowedCidrs: ['127.0.0.0/8'] }, { lookup: rebinding, connectionsPerOrigin: 1 });
    const url = `http://rebind.example.com:${receiver.port}/hook`;
    expect((await c.request(url)).status).toBe(200);
    await receiver.close(); // drops the kept-alive connection: the next request must connect again
    receiver = await startReceiver();
    const again = `http://rebind.example.com:${receiver.port}/hook`;
    expect((await failure(c.request(again))).code).toBe('address_not_allowed');
    expect(receiver.hits).toEqual([]);
  });
});

describe('IPv6 and IPv4-mapped forms', () => {
  it('reaches an IPv6 loopback receiver only with ::1 allowed', async () => {
    const v6 = await startReceiver({ host: '::1' });
    try {
      expect((await client(LOCAL).request(`${v6.origin}/hook`)).status).toBe(200);
      expect((await failure(client({ allowHttp: true, allowedCidrs: ['127.0.0.0/8'] }).request(`${v6.origin}/hook`))).code).toBe('address_not_allowed');
      const named = client(HTTP_ONLY, { lookup: resolvingTo('::1') });
      expect((await failure(named.request(`http://v6.example.com:${v6.port}/hook`))).code).toBe('address_not_allowed');
      expect(v6.hits).toHaveLength(1);
    } finally {
      await v6.close();
    }
  });

  it('judges an IPv4-mapped address by the IPv4 it reaches', async () => {
    const mapped = `http://[::ffff:127.0.0.1]:${receiver.port}/hook`;
    expect((await client({ allowHttp: true, allowedCidrs: ['127.0.0.0/8'] }).request(mapped)).status).toBe(200);
    expect((await failure(client(HTTP_ONLY).request(mapped))).code).toBe('address_not_allowed');
    const named = client(HTTP_ONLY, { lookup: resolvingTo('::ffff:127.0.0.1') });
    expect((await failure(named.request(`http://mapped.example.com:${receiver.port}/hook`))).code).toBe('address_not_allowed');
    expect(receiver.hits).toHaveLength(1);
  });
});

describe('https only unless allowed', () => {
  it('refuses http in production before connecting, and talks https to a trusted receiver', async () => {
    const secure = await startReceiver({ tls: true });
    try {
      const c = client({ allowHttp: false, allowedCidrs: ['127.0.0.0/8'] }, { ca: CERT });
      const err = await failure(c.request(`${receiver.origin}/hook`));
      expect(err).toMatchObject({ code: 'url_not_allowed', message: 'the URL must use https' });
      expect(receiver.hits).toEqual([]);
      expect((await c.request(`${secure.origin}/hook`, { method: 'POST', body: 'x' })).body.toString()).toBe('ok POST x');
      expect((await c.request(`https://localhost:${secure.port}/hook`)).status).toBe(200);
      // the production guard refuses the https receiver too: it is on loopback
      expect((await failure(client(PRODUCTION, { ca: CERT }).request(`${secure.origin}/hook`))).code).toBe('address_not_allowed');
    } finally {
      await secure.close();
    }
  });

  it('fails with tls_failed when the certificate is not trusted', async () => {
    const secure = await startReceiver({ tls: true });
    try {
      const err = await failure(client(LOCAL).request(`${secure.origin}/hook`));
      expect(err.code).toBe('tls_failed');
      expect(secure.hits).toEqual([]);
    } finally {
      await secure.close();
    }
  });
});

describe('redirects, time and size caps, failures', () => {
  it('returns a redirect as its status and never follows it', async () => {
    const res = await client(LOCAL).request(`${receiver.origin}/redirect`);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/target');
    expect(receiver.hits.map((h) => h.path)).toEqual(['/redirect']);
  });

  it('times out a receiver that answers after the limit, without waiting for it', async () => {
    const c = client(LOCAL);
    for (const path of ['/slow', '/slow-body']) {
      const started = Date.now();
      const err = await failure(c.request(`${receiver.origin}${path}`, { timeoutMs: 300 }));
      expect(err).toMatchObject({ code: 'timeout', message: 'the target did not answer in time' });
      expect(Date.now() - started).toBeLessThan(SLOW_MS - 1000);
    }
  });

  it('truncates a response larger than the cap and says so', async () => {
    const c = client(LOCAL);
    for (const path of ['/big', '/big-length']) {
      const res = await c.request(`${receiver.origin}${path}`, { maxResponseBytes: 2048 });
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(2048);
      expect(res.truncated).toBe(true);
    }
    const exact = await c.request(`${receiver.origin}/exact-2k`, { maxResponseBytes: 2048 });
    expect(exact.body).toHaveLength(2048);
    expect(exact.truncated).toBe(false);
    const whole = await c.request(`${receiver.origin}/big`, { maxResponseBytes: BIG });
    expect(whole.body).toHaveLength(BIG);
    expect(whole.truncated).toBe(false);
  });

  it('fails with response_too_large when the caller asks to', async () => {
    const c = client(LOCAL);
    for (const path of ['/big', '/big-length']) {
      const err = await failure(c.request(`${receiver.origin}${path}`, { maxResponseBytes: 2048, onTooLarge: 'fail' }));
      expect(err.code).toBe('response_too_large');
    }
    expect((await c.request(`${receiver.origin}/exact-2k`, { maxResponseBytes: 2048, onTooLarge: 'fail' })).body).toHaveLength(2048);
  });

  it('reports a refused connection and an unresolvable name', async () => {
    const port = await closedPort();
    expect(await failure(client(LOCAL).request(`http://127.0.0.1:${port}/hook`))).toMatchObject({
      code: 'connection_failed',
      message: 'the target refused the connection',
    });
    const nxdomain: Lookup = (_h, _o, cb) => cb(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }), []);
    expect((await failure(client(LOCAL, { lookup: nxdomain }).request('http://nowhere.invalid/hook'))).code).toBe('dns_failed');
  });

  it('keeps working for one target while another times out (one agent, many origins)', async () => {
    const c = client(LOCAL);
    const slow = c.request(`${receiver.origin}/slow`, { timeoutMs: 2_000 }).catch((e: OutboundError) => e.code);
    const other = await startReceiver();
    try {
      const started = Date.now();
      expect((await c.request(`${other.origin}/hook`)).status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(await slow).toBe('timeout');
    } finally {
      await other.close();
    }
  });
});
