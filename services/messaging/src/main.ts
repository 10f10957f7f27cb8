import '@mailer/telemetry/register';
import { runService } from '@mailer/kit/service';
import { loadMessagingConfig } from './config';
import { setup } from './server';
import { NATS_ACCESS } from './nats-access';

const config = loadMessagingConfig();
// Every accepted message records a job and every delivery facts: published records are deleted at
// once (JetStream holds them) so the outbox keeps only the pending ones (an embedded store keeps its
// collections in memory).
void runService({ name: 'messaging', config, nats: NATS_ACCESS, grpcAddress: config.MESSAGING_GRPC_ADDR, setup, outbox: { batchSize: config.OUTBOX_BATCH_SIZE, retainPublishedMs: 0 } });
