import { Writable } from 'node:stream';
import { credentials, makeGenericClientConstructor, status, type ServiceDefinition, type ServiceError } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import pino from 'pino';
import { commonV1 } from '@mailer/proto';
import { createClient, createGrpcServer, createMetrics, grpcCallers, GRPC_CALLS, serviceTokens, SERVICE_TOKEN_LIFETIME_S, useServiceIdentity } from '@mailer/kit';

// Internal gRPC authentication: the token itself (sign / verify), then a server that checks it,
// called by real clients over loopback as different processes.

const SECRET = 'an-internal-secret-of-at-least-32-characters';
const OTHER_SECRET = 'another-secret-of-at-least-32-characters!!';

describe('service tokens', () => {
  const tokens = serviceTokens(SECRET);
  const now = Date.UTC(2030, 0, 1);

  it('name the caller and verify within their lifetime', () => {
    const header = tokens.sign('form', now);
    expect(header).toMatch(/^Bearer svc1\.form\.\d+\.[A-Za-z0-9_-]{43}$/);
    expect(tokens.verify(header, now)).toEqual({ ok: true, caller: 'form' });
    expect(tokens.verify(header, now + SERVICE_TOKEN_LIFETIME_S * 1000)).toEqual({ ok: true, caller: 'form' });
  });

  it('expire (after a tolerance for clock skew) and are refused from far in the future', () => {
    const header = tokens.sign('form', now);
    expect(tokens.verify(header, now + (SERVICE_TOKEN_LIFETIME_S + 31) * 1000)).toEqual({ ok: false, reason: 'expired' });
    // Signed by a clock far ahead (or forged with a long life): refused too.
    expect(tokens.verify(tokens.sign('form', now + 10 * 60_000), now)).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuse another secret, a changed caller, a missing or malformed value', () => {
    const header = tokens.sign('form', now);
    expect(serviceTokens(OTHER_SECRET).verify(header, now)).toEqual({ ok: false, reason: 'bad signature' });
    expect(tokens.verify(header.replace('.form.', '.gateway.'), now)).toEqual({ ok: false, reason: 'bad signature' });
    expect(tokens.verify(undefined, now)).toEqual({ ok: false, reason: 'missing' });
    expect(tokens.verify('Bearer nonsense', now)).toEqual({ ok: false, reason: 'malformed' });
    expect(tokens.verify(header.slice(7), now)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('need a secret of 32 characters or more', () => {
    expect(() => serviceTokens('short')).toThrow(/at least 32 characters/);
  });
});

describe('GRPC_CALLS', () => {
  it('lets the gateway call every service and nobody call the gateway', () => {
    for (const service of Object.keys(GRPC_CALLS).filter((p) => p !== 'gateway')) {
      expect(grpcCallers(service as never)).toContain('gateway');
    }
    expect(grpcCallers('subscriber')).toEqual(expect.arrayContaining(['segment', 'form', 'rss', 'messaging']));
    expect(grpcCallers('subscriber')).not.toContain('webhook');
  });
});

describe('a server that checks callers', () => {
  const logLines: string[] = [];
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _e, done) => (logLines.push(String(chunk)), done()) }));
  let server: ReturnType<typeof createGrpcServer>;
  let address: string;

  beforeAll(async () => {
    server = createGrpcServer({ logger, metrics: createMetrics('test'), auth: { service: 'subscriber', secret: SECRET } });
    server.add(commonV1.FieldUsageServiceService, { listFieldUsages: async () => ({ usages: [] }) });
    address = `127.0.0.1:${await server.listen('127.0.0.1:0')}`;
    server.setServing(true);
  });
  afterAll(async () => {
    useServiceIdentity('test', undefined);
    await server.shutdown(1_000);
  });

  const callAs = async (name: string, secret: string | undefined) => {
    useServiceIdentity(name, secret);
    const client = createClient(commonV1.FieldUsageServiceClient, address);
    try {
      return await client.listFieldUsages({ accountId: 'a1', fieldId: 'f1', personalizationTagName: '' }).then(
        () => 'OK',
        (err: ServiceError) => `${status[err.code]}: ${err.details}`,
      );
    } finally {
      client.close();
    }
  };

  it('answers an allowed caller with a valid token', async () => {
    expect(await callAs('gateway', SECRET)).toBe('OK');
    expect(await callAs('segment', SECRET)).toBe('OK');
  });

  it('refuses a call without a token, or signed with another secret: UNAUTHENTICATED', async () => {
    expect(await callAs('gateway', undefined)).toBe('UNAUTHENTICATED: a valid service token is required');
    expect(await callAs('gateway', OTHER_SECRET)).toBe('UNAUTHENTICATED: a valid service token is required');
    // The reason is logged, never the token.
    expect(logLines.join('')).toMatch(/"reason":"bad signature"/);
    expect(logLines.join('')).not.toMatch(/Bearer/);
  });

  it('refuses a caller GRPC_CALLS does not allow: PERMISSION_DENIED', async () => {
    expect(await callAs('webhook', SECRET)).toBe('PERMISSION_DENIED: webhook may not call the subscriber service');
  });

  it('keeps grpc.health.v1 open for probes', async () => {
    useServiceIdentity('probe', undefined);
    const Health = makeGenericClientConstructor(healthService as unknown as ServiceDefinition, 'grpc.health.v1.Health');
    const health = new Health(address, credentials.createInsecure()) as unknown as {
      Check(req: { service: string }, cb: (err: Error | null, res?: { status?: string }) => void): void;
      close(): void;
    };
    const answer = await new Promise<string>((resolve, reject) => health.Check({ service: '' }, (err, res) => (err ? reject(err) : resolve(String(res?.status)))));
    health.close();
    expect(answer).toBe('SERVING');
  });
});
