import '@mailer/telemetry/register';
import { runService } from '@mailer/kit/service';
import { loadMessagingConfig } from './config';
import { setup } from './server';

const config = loadMessagingConfig();
void runService({
  name: 'messaging',
  config,
  grpcAddress: config.MESSAGING_GRPC_ADDR,
  setup,
  // Every accepted message records a job: published records are deleted at once (JetStream holds them).
  outbox: { batchSize: config.OUTBOX_BATCH_SIZE, retainPublishedMs: 0 },
});
