// GetSuppression (the form service's question before a signup) on a real messaging process: found
// with its reason for a suppressed address (any case), not found otherwise or in another account,
// invalid_email for something that is not an address.
import crypto from 'node:crypto';
import { createClient, type PromiseClient } from '@mailer/kit';
import { suppressionsV1 } from '@mailer/proto';
import { startNatsServer, startService, type NatsServerHandle, type RunningService } from '@mailer/testing';

jest.setTimeout(120_000);

let nats: NatsServerHandle;
let messaging: RunningService;
let client: PromiseClient<suppressionsV1.SuppressionServiceClient>;

beforeAll(async () => {
  nats = await startNatsServer();
  messaging = await startService('messaging', { NATS_URL: nats.url, PUBLIC_BASE_URL: 'https://mail.test', MAIL_SEND_PAUSED: 'true' });
  client = createClient(suppressionsV1.SuppressionServiceClient, messaging.address, 30_000);
});
afterAll(async () => {
  client?.close();
  await messaging?.stop();
  await nats?.stop();
});

test('found with its reason for a suppressed address, whatever its case; not found elsewhere', async () => {
  const accountId = crypto.randomUUID();
  const other = crypto.randomUUID();
  await client.addSuppression({ accountId, email: 'gone@example.org' });
  const R = suppressionsV1.SuppressionReason;
  expect(await client.getSuppression({ accountId, email: ' Gone@Example.org ' })).toEqual({ found: true, reason: R.SUPPRESSION_REASON_MANUAL });
  expect(await client.getSuppression({ accountId, email: 'here@example.org' })).toEqual({ found: false, reason: R.SUPPRESSION_REASON_UNSPECIFIED });
  expect(await client.getSuppression({ accountId: other, email: 'gone@example.org' })).toEqual({ found: false, reason: R.SUPPRESSION_REASON_UNSPECIFIED });
  await expect(client.getSuppression({ accountId, email: 'not an address' })).rejects.toMatchObject({ code: 3 });
});
