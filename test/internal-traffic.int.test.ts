// Internal traffic is authenticated (docs/architecture.md "Internal traffic"): on NATS every process is a user of its
// own that may publish, consume and read only what its src/nats-access.ts declares; gRPC calls carry a
// signed service token that every server checks against GRPC_CALLS. Real nats-server, real processes.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { connect, type NatsConnection } from 'nats';
import { accountNames, ensureStreams, inboxPrefix, openKv } from '@mailer/nats';
import { serviceTokens } from '@mailer/kit';
import { subscriberV1 } from '@mailer/proto';
import { harnessCredentials, processCredentials, startNatsServer, startService, type NatsServerHandle, type RunningService } from '@mailer/testing';

let nats: NatsServerHandle;
let operator: NatsConnection;
const open: NatsConnection[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  operator = await connect({ servers: nats.url, ...nats.auth });
  await ensureStreams(operator);
});
afterAll(async () => {
  await Promise.all([operator, ...open].map((nc) => nc?.close().catch(() => undefined)));
  await nats?.stop();
});

/** Connects as a process's NATS user, as the process itself does (its own inbox prefix). */
async function as(name: 'gateway' | 'form' | 'segment' | 'messaging', pass = processCredentials(name).NATS_PASSWORD): Promise<NatsConnection> {
  const nc = await connect({ servers: nats.url, user: name, pass, inboxPrefix: inboxPrefix(name), maxReconnectAttempts: 0 });
  open.push(nc);
  return nc;
}

/** Waits until the server logged a violation matching `pattern` (the evidence of a refusal). */
async function violation(pattern: RegExp): Promise<string> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const found = nats.permissionViolations().find((l) => pattern.test(l));
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no violation matching ${pattern}; seen:\n${nats.permissionViolations().join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const lastSubject = async (stream: string) => (await (await operator.jetstreamManager()).streams.info(stream)).state.last_seq;

describe('NATS', () => {
  it('refuses a client without credentials or with a wrong password, and a process so configured stops at once', async () => {
    await expect(connect({ servers: nats.url, maxReconnectAttempts: 0 })).rejects.toMatchObject({ code: 'AUTHORIZATION_VIOLATION' });
    await expect(as('form', 'not-the-password')).rejects.toMatchObject({ code: 'AUTHORIZATION_VIOLATION' });
    const started = Date.now();
    await expect(startService('form', { NATS_URL: nats.url, NATS_PASSWORD: 'not-the-password' })).rejects.toThrow(/cannot connect to NATS at .*Authorization Violation/);
    // A credentials problem does not heal by waiting: no retries until NATS_CONNECT_TIMEOUT_MS.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('lets the form service publish its own job but not an email job', async () => {
    const js = (await as('form')).jetstream();
    const before = await lastSubject('JOBS');
    await js.publish('jobs.form-submission.acc-1', '{}');
    expect(await lastSubject('JOBS')).toBe(before + 1);
    await expect(js.publish('jobs.email.acc-1', '{"accountId":"acc-1","messageId":"m-1"}', { timeout: 1_000 })).rejects.toThrow();
    await violation(/Publish Violation - User "form", Subject "jobs\.email\.acc-1"/);
    expect(await lastSubject('JOBS')).toBe(before + 1);
  });

  it("keeps the gateway's API-key bucket from every other process", async () => {
    const gateway = await as('gateway');
    const keys = await openKv(gateway, 'gateway-accounts');
    await keys.put('apikey.0123abcd', '{"accountId":"acc-1"}');
    expect((await keys.get('apikey.0123abcd'))?.string()).toBe('{"accountId":"acc-1"}');

    const form = await as('form');
    await expect(openKv(form, 'gateway-accounts')).rejects.toThrow();
    await violation(/User "form", Subject "\$JS\.API\.STREAM\.(INFO|CREATE)\.KV_gateway-accounts"/);
    // Nor can it write a key, or listen to the gateway's replies (which carry the bucket's values).
    form.publish('$KV.gateway-accounts.apikey.0123abcd', '{"accountId":"acc-evil"}');
    await violation(/Publish Violation - User "form", Subject "\$KV\.gateway-accounts\.apikey\.0123abcd"/);
    form.subscribe(`${inboxPrefix('gateway')}.>`);
    await violation(/Subscription Violation - User "form", Subject "_INBOX\.gateway\.>"/);
    expect((await keys.get('apikey.0123abcd'))?.string()).toBe('{"accountId":"acc-1"}');
  });

  it('lets the form service read the accounts\' display names, and nothing more of that bucket', async () => {
    const names = await openKv(await as('gateway'), 'account-names');
    await names.put('acc-1', '{"name":"Acme"}');
    const form = await as('form');
    expect(await accountNames(form).nameOf('acc-1')).toBe('Acme');
    form.publish('$KV.account-names.acc-1', '{"name":"Evil"}');
    await violation(/Publish Violation - User "form", Subject "\$KV\.account-names\.acc-1"/);
    expect(await accountNames(form).nameOf('acc-1')).toBe('Acme');
  });

  it("lets no process pull another's consumer: not by name, not with a name of its choosing", async () => {
    const jsm = await operator.jetstreamManager();
    await jsm.consumers.add('JOBS', { durable_name: 'messaging-email-delivery', filter_subject: 'jobs.email.>', ack_policy: 'explicit' as never });
    await jsm.consumers.add('DOMAIN', { durable_name: 'webhook-fan-out', filter_subject: 'domain.>', ack_policy: 'explicit' as never });

    const form = await as('form');
    await expect(form.jetstream().consumers.get('JOBS', 'messaging-email-delivery')).rejects.toThrow(/Permissions Violation/);
    await expect(form.request('$JS.API.CONSUMER.MSG.NEXT.JOBS.messaging-email-delivery', '{"batch":1}', { timeout: 1_000 })).rejects.toThrow();
    await violation(/User "form", Subject "\$JS\.API\.CONSUMER\.MSG\.NEXT\.JOBS\.messaging-email-delivery"/);

    // The segment service names its projection itself (SEGMENT_PROJECTION_DURABLE), on DOMAIN only, never another's.
    const segment = await as('segment');
    const segmentJsm = await segment.jetstreamManager();
    await segmentJsm.consumers.add('DOMAIN', { durable_name: 'segment-rebuild-2', filter_subject: 'domain.>', ack_policy: 'explicit' as never });
    await expect(segmentJsm.consumers.add('DOMAIN', { durable_name: 'webhook-fan-out', filter_subject: 'domain.>', ack_policy: 'explicit' as never })).rejects.toThrow();
    await violation(/User "segment", Subject "\$JS\.API\.CONSUMER\.CREATE\.DOMAIN\.webhook-fan-out\.domain\.>"/);
    await expect(segmentJsm.consumers.add('JOBS', { durable_name: 'segment-x', filter_subject: 'jobs.email.>', ack_policy: 'explicit' as never })).rejects.toThrow();
    await violation(/User "segment", Subject "\$JS\.API\.CONSUMER\.CREATE\.JOBS\.segment-x\.jobs\.email\.>"/);
  });
});

describe('gRPC', () => {
  let subscriber: RunningService;
  let raw: subscriberV1.SubscriberServiceClient;
  beforeAll(async () => {
    subscriber = await startService('subscriber', { NATS_URL: nats.url });
    raw = new subscriberV1.SubscriberServiceClient(subscriber.address, credentials.createInsecure());
  });
  afterAll(async () => {
    raw?.close();
    await subscriber?.stop();
  });

  /** ListTags on the subscriber service with `authorization` metadata as given: OK or the status and details. */
  const call = (authorization?: string) =>
    new Promise<string>((resolve) => {
      const md = new Metadata();
      if (authorization) md.set('authorization', authorization);
      raw.listTags({ accountId: 'acc-1' }, md, { deadline: Date.now() + 5_000 }, (err: ServiceError | null) =>
        resolve(err ? `${status[err.code]}: ${err.details}` : 'OK'),
      );
    });

  it('refuses a call without a valid service token (UNAUTHENTICATED)', async () => {
    expect(await call()).toBe('UNAUTHENTICATED: a valid service token is required');
    expect(await call(serviceTokens('a-secret-that-is-not-the-internal-one!!!!').sign('gateway'))).toBe('UNAUTHENTICATED: a valid service token is required');
  });

  it('refuses a process that does not call this service (PERMISSION_DENIED), answers one that does', async () => {
    const tokens = serviceTokens(harnessCredentials.grpcSecret);
    expect(await call(tokens.sign('webhook'))).toBe('PERMISSION_DENIED: webhook may not call the subscriber service');
    expect(await call(tokens.sign('gateway'))).toBe('OK');
    expect(await call(tokens.sign('segment'))).toBe('OK');
  });
});

describe('NATS over TLS', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-tls-'));
  const file = (name: string) => path.join(dir, name);
  let tlsNats: NatsServerHandle;
  beforeAll(async () => {
    // A CA and a server certificate for this host (openssl, as an operator would make them). The
    // client checks an address it dialled by IP against the name "localhost".
    const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
    ssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '1', '-subj', '/CN=test-ca');
    ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=127.0.0.1');
    fs.writeFileSync(file('ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    ssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('server.pem'), '-days', '1', '-extfile', file('ext'));
    tlsNats = await startNatsServer({ tls: { certFile: file('server.pem'), keyFile: file('server.key') } });
  });
  afterAll(async () => {
    await tlsNats?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a process trusting the CA (NATS_TLS_CA) connects; without it the server certificate is refused', async () => {
    const svc = await startService('rss', { NATS_URL: tlsNats.url, NATS_TLS_CA: file('ca.pem') });
    await svc.stop();
    await expect(startService('rss', { NATS_URL: tlsNats.url, NATS_CONNECT_TIMEOUT_MS: '2000' })).rejects.toThrow(/cannot connect to NATS at tls:.*(certificate|CERT)/);
  });
});
