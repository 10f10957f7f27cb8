// The owner's side of "who uses this?" (referenceCheck) against two ReferenceService doubles standing
// in for the rss and messaging services, and the server side (referenceHandlers) over real gRPC.
import pino from 'pino';
import { referencesV1 } from '@mailer/proto';
import { startReferenceSource, type ReferenceSourceDouble } from '@mailer/testing/subscriber';
import { referenceCheck, referenceHandlers, type ReferenceCheck, type ReferencedKind } from '../src/references';
import { createClient } from '../src/grpc-client';
import { createGrpcServer } from '../src/grpc-server';
import { createMetrics } from '../src/metrics';

const ACCOUNT = 'acc-1';
const ID = '3f1c2a4e-8d0b-4c1e-9f6a-2b7d5e8c9a01';
let rss: ReferenceSourceDouble;
let messaging: ReferenceSourceDouble;
let check: ReferenceCheck;

beforeAll(async () => {
  [rss, messaging] = await Promise.all([startReferenceSource(), startReferenceSource()]);
  check = referenceCheck({ rss: rss.address, messaging: messaging.address });
});
afterAll(async () => {
  check.close();
  await Promise.all([rss.close(), messaging.close()]);
});
afterEach(() => {
  rss.reset();
  messaging.reset();
});

const refusal = (kind: ReferencedKind) => check.refuseWhileReferenced(ACCOUNT, kind, ID).then(() => null, (err: unknown) => err);

it('resolves when no service names the record; both are asked', async () => {
  expect(await refusal('SEGMENT')).toBeNull();
  expect(rss.asked.at(-1)).toBe(ID);
  expect(messaging.asked.at(-1)).toBe(ID);
});

it('refuses with <kind>_in_use listing every user of every service', async () => {
  rss.refer(ID, [{ collection: 'rssNewsletters', id: 'n1', name: 'Weekly', use: 'sends its issues to this topic' }]);
  messaging.refer(ID, [{ collection: 'automations', id: 'a1', name: 'Onboarding', use: 'sends to this topic in a SEND_EMAIL step' }]);
  expect(await refusal('TOPIC')).toMatchObject({
    code: 9, // FAILED_PRECONDITION
    errorId: 'topic_in_use',
    message: 'the topic is used by 2 record(s) (rssNewsletters, automations); change or delete them first',
    details: [
      { path: 'rssNewsletters.n1', problem: '"Weekly" sends its issues to this topic' },
      { path: 'automations.a1', problem: '"Onboarding" sends to this topic in a SEND_EMAIL step' },
    ],
  });
});

it('a service that does not answer makes the delete UNAVAILABLE, naming it; users found elsewhere still make it 409', async () => {
  rss.fail(ID);
  expect(await refusal('SEGMENT')).toMatchObject({ code: 14, errorId: 'service_unavailable', message: expect.stringMatching(/^The rss service, which knows what uses this segment, is unavailable/) });
  messaging.refer(ID, [{ collection: 'automations', id: 'a1', name: 'Onboarding', use: 'checks this segment in an IF_IN_SEGMENT step' }]);
  expect(await refusal('SEGMENT')).toMatchObject({ errorId: 'segment_in_use', details: [{ path: 'automations.a1', problem: expect.any(String) }] });
});

it('the server side answers its list function, and nothing for an unknown kind or an id no record has', async () => {
  const seen: Array<[string, string, string]> = [];
  const server = createGrpcServer({ logger: pino({ level: 'silent' }), metrics: createMetrics('test') });
  server.add(
    referencesV1.ReferenceServiceService,
    referenceHandlers(async (accountId, kind, id) => {
      seen.push([accountId, kind, id]);
      return { count: 7, references: [{ collection: 'rssNewsletters', id: 'n1', name: 'Weekly', use: 'sends its issues to this segment' }] };
    }),
  );
  const port = await server.listen('127.0.0.1:0');
  const client = createClient(referencesV1.ReferenceServiceClient, `127.0.0.1:${port}`);
  try {
    expect(await client.listReferences({ accountId: ACCOUNT, kind: referencesV1.ReferencedKind.REFERENCED_KIND_SEGMENT, id: ID.toUpperCase() })).toEqual({
      count: 7,
      references: [{ collection: 'rssNewsletters', id: 'n1', name: 'Weekly', use: 'sends its issues to this segment' }],
    });
    expect(seen).toEqual([[ACCOUNT, 'SEGMENT', ID]]);
    expect(await client.listReferences({ accountId: ACCOUNT, kind: referencesV1.ReferencedKind.REFERENCED_KIND_UNSPECIFIED, id: ID })).toEqual({ count: 0, references: [] });
    expect(await client.listReferences({ accountId: ACCOUNT, kind: referencesV1.ReferencedKind.REFERENCED_KIND_TOPIC, id: '' })).toEqual({ count: 0, references: [] });
    expect(seen).toHaveLength(1);
  } finally {
    client.close();
    await server.shutdown(1_000);
  }
});
