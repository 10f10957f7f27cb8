// acceptBatch on a real embedded store: a batch that cannot be looked up and rendered within its limit
// (a busy replica) is refused with nothing stored, so it is never stored after its caller gave up; the
// same batch in time is stored whole in one transaction. The answers message by message are tested
// through the gateway (gateway/test/email-batch.int.test.ts).
import { randomUUID } from 'node:crypto';
import { DomainError } from '@mailer/kit';
import { OUTBOX_COLLECTION, outboxRepository, outboxSchema, type OutboxDoc } from '@mailer/nats';
import { openTempStore, type TempStore } from '@mailer/testing/store';
import { acceptBatch, type BatchDeps } from '../src/mail/app/accept-batch';
import { createEmailTemplate } from '../src/templates/app/email-templates';
import { publicLinks } from '../src/readers/app/public-links';
import { domainPolicy } from '../src/templates/app/sending-domains';
import { createSenderProfile } from '../src/templates/app/sender-profiles';
import { messageCollections } from '../src/mail/store/messages';
import { suppressionCollection } from '../src/readers/store/suppressions';

const A = '0193b6f0-0000-7000-8000-00000000000b';
let tmp: TempStore;
let deps: BatchDeps;
let lookupMs: number;

beforeEach(async () => {
  tmp = await openTempStore('accept-batch');
  lookupMs = 0;
  const domains = domainPolicy({ store: tmp.store, verification: 'off', keys: null, operatorKeys: {} });
  deps = {
    store: tmp.store,
    messages: messageCollections(tmp.store),
    suppressions: suppressionCollection(tmp.store),
    outbox: outboxRepository(tmp.store),
    recipients: { recipientByEmail: async () => null },
    batchRecipients: { recipientsByEmail: () => new Promise((resolve) => setTimeout(() => resolve(new Map()), lookupMs)) },
    links: publicLinks({ PUBLIC_BASE_URL: 'https://mail.example.test', BOUNCE_DOMAIN: 'bounces.example.test', TRACKING_SECRET: 'x'.repeat(40), TRACKING_SECRET_PREVIOUS: [] }),
    domains,
    now: () => new Date('2026-01-01T10:00:00Z'),
    newId: randomUUID,
    notify: () => undefined,
    awaitPublished: async () => true,
    batchRenderLimitMs: 200,
  };
  const catalog = { store: tmp.store, now: deps.now, newId: randomUUID, allowedFromDomains: [], domains };
  await createSenderProfile(catalog, A, { name: 'Shop', fromEmail: 'shop@example.com', fromName: 'Shop' });
  await createEmailTemplate(catalog, A, { name: 'receipt', subject: 'Receipt {{ n }}', html: '<p>{{ n }}</p>' });
});
afterEach(() => tmp.close());

const batch = Array.from({ length: 20 }, (_, i) => ({ templateName: 'receipt', email: `r${i}@example.org`, substitutionData: { n: i }, eventProperties: null, idempotencyKey: '' }));
const stored = async () => ({ messages: await deps.messages.messages.countDocuments({ accountId: A }), jobs: (await tmp.store.collection<OutboxDoc>(OUTBOX_COLLECTION, outboxSchema).find({})).length });

it('a batch past its render limit is refused (503) with nothing stored; in time it is stored whole with its jobs', async () => {
  lookupMs = 400;
  const err = await acceptBatch(deps, A, batch).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(DomainError);
  expect([(err as DomainError).code, (err as DomainError).errorId]).toEqual([14, 'service_unavailable']);
  expect(await stored()).toEqual({ messages: 0, jobs: 0 });
  lookupMs = 0;
  const results = await acceptBatch(deps, A, batch);
  expect(results.every((r, i) => r.index === i && 'messageId' in r && r.status === 'QUEUED')).toBe(true);
  expect(await stored()).toEqual({ messages: 20, jobs: 20 });
});
