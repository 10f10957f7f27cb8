import '@mailer/telemetry/register';
import { runService } from '@mailer/kit/service';
import { loadMessagingConfig } from './config';
import { setup } from './server';

const config = loadMessagingConfig();
// Every delivery records facts: published ones are deleted at once so the outbox holds only the
// pending ones (an embedded store keeps its collections in memory).
void runService({ name: 'messaging', config, grpcAddress: config.MESSAGING_GRPC_ADDR, setup, outbox: { batchSize: config.OUTBOX_BATCH_SIZE, retainPublishedMs: 0 } });
