import { ANY_DURABLE, covers, inboxPrefix, natsPermissions, serviceAccess, type NatsAccess } from '../src';

// The permissions a process's NATS user gets follow from its declaration alone: these pin the
// derivation; test/internal-traffic.int.test.ts shows a real nats-server enforcing them.

const form = serviceAccess({
  name: 'form',
  publishes: ['domain.form.submitted', 'jobs.form-submission.>'],
  consumers: { jobs: { stream: 'JOBS', durable: 'form-jobs', filterSubject: 'jobs.form-submission.>' } },
});
const projection = serviceAccess({ name: 'segment', publishes: [], consumers: { p: { stream: 'DOMAIN', durable: ANY_DURABLE, filterSubject: 'domain.>' } } });
const fanOut = serviceAccess({ name: 'webhook', publishes: ['jobs.webhook.>'], consumers: { f: { stream: 'DOMAIN', durable: 'webhook-fan-out', filterSubject: 'domain.>' } } });
const gateway: NatsAccess = { name: 'gateway', streams: ['EVENTS'], buckets: ['gateway-accounts'], publishes: ['events.>'], consumers: {} };

describe('covers', () => {
  it.each([
    ['jobs.>', 'jobs.email.a1', true],
    ['jobs.>', 'jobs.email.>', true],
    ['jobs.>', 'jobs', false],
    ['jobs.email.*', 'jobs.email.a1', true],
    ['jobs.email.*', 'jobs.email.>', false],
    ['jobs.email.*', 'jobs.email.*', true],
    ['domain.*', 'domain.form.submitted', false],
    ['events.>', 'jobs.x', false],
  ])('%s covers %s: %s', (pattern, subject, expected) => {
    expect(covers(pattern, subject)).toBe(expected);
  });
});

describe('serviceAccess', () => {
  it('declares the streams a service publishes to or consumes from, and no other', () => {
    expect(form.streams).toEqual(['DOMAIN', 'JOBS']);
    expect(projection.streams).toEqual(['DOMAIN']);
    expect(serviceAccess({ name: 'rss', publishes: ['domain.rss.issue_sent'], consumers: {} }).streams).toEqual(['DOMAIN']);
  });
});

describe('natsPermissions', () => {
  const perms = natsPermissions(form, [form, projection, fanOut, gateway]);
  const publish = perms.publish.allow;

  it('allows publishing the declared subjects only', () => {
    expect(publish).toEqual(expect.arrayContaining(['domain.form.submitted', 'jobs.form-submission.>']));
    expect(publish.some((p) => covers(p, 'jobs.email.a1'))).toBe(false);
    expect(publish.some((p) => covers(p, 'events.a1'))).toBe(false);
  });

  it('allows the JetStream API of its own streams and consumers: create pinned to the filter, pull, ack', () => {
    expect(publish).toEqual(
      expect.arrayContaining([
        '$JS.API.INFO',
        '$JS.API.STREAM.INFO.JOBS',
        '$JS.API.STREAM.UPDATE.JOBS',
        '$JS.API.CONSUMER.CREATE.JOBS.form-jobs.jobs.form-submission.>',
        '$JS.API.CONSUMER.MSG.NEXT.JOBS.form-jobs',
        '$JS.ACK.JOBS.form-jobs.>',
      ]),
    );
    expect(publish.some((p) => covers(p, '$JS.API.STREAM.UPDATE.EVENTS'))).toBe(false);
    expect(publish.some((p) => covers(p, '$JS.API.CONSUMER.CREATE.JOBS.form-jobs.jobs.email.>'))).toBe(false);
    expect(publish.some((p) => covers(p, '$JS.API.CONSUMER.MSG.NEXT.JOBS.messaging-email-delivery'))).toBe(false);
  });

  it('subscribes to its own inbox only', () => {
    expect(perms.subscribe.allow).toEqual([`${inboxPrefix('form')}.>`]);
  });

  it('gives a bucket owner its KV subjects, and nobody else', () => {
    const gw = natsPermissions(gateway).publish.allow;
    expect(gw).toEqual(expect.arrayContaining(['$KV.gateway-accounts.>', '$JS.API.STREAM.MSG.GET.KV_gateway-accounts', '$JS.API.DIRECT.GET.KV_gateway-accounts.>']));
    expect(publish.some((p) => p.includes('gateway-accounts'))).toBe(false);
  });

  it('gives a reader of a bucket gets only: no write, no watch', () => {
    const reader = natsPermissions({ ...form, readBuckets: ['account-names'] }).publish.allow;
    expect(reader).toEqual(expect.arrayContaining(['$JS.API.STREAM.MSG.GET.KV_account-names', '$JS.API.DIRECT.GET.KV_account-names.>']));
    for (const write of ['$KV.account-names.acc-1', '$JS.API.STREAM.CREATE.KV_account-names', '$JS.API.STREAM.PURGE.KV_account-names', '$JS.API.CONSUMER.CREATE.KV_account-names']) {
      expect(reader.some((p) => covers(p, write))).toBe(false);
    }
  });

  it("a consumer of any name may not take another process's consumer", () => {
    const seg = natsPermissions(projection, [form, projection, fanOut, gateway]);
    expect(seg.publish.allow).toEqual(expect.arrayContaining(['$JS.API.CONSUMER.MSG.NEXT.DOMAIN.*', '$JS.API.CONSUMER.CREATE.DOMAIN.*.domain.>']));
    expect(seg.publish.deny).toEqual(
      expect.arrayContaining(['$JS.API.CONSUMER.MSG.NEXT.DOMAIN.webhook-fan-out', '$JS.ACK.DOMAIN.webhook-fan-out.>', '$JS.API.CONSUMER.CREATE.DOMAIN.webhook-fan-out.>']),
    );
    // Consumers on other streams are not its business, and its own name is not denied.
    expect(seg.publish.deny!.some((d) => d.includes('form-jobs'))).toBe(false);
    expect(natsPermissions(form, [form, projection]).publish.deny).toBeUndefined();
  });
});
