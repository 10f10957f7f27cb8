import '@mailer/telemetry/register';
import { runService } from '@mailer/kit/service';
import { loadWebhookConfig } from './config';
import { setup } from './server';
import { NATS_ACCESS } from './nats-access';

const config = loadWebhookConfig();
// Every delivery records a job: published records are deleted at once (JetStream holds them), so the
// outbox keeps only the pending ones, read in large batches during a fan-out of many facts.
void runService({ name: 'webhook', config, nats: NATS_ACCESS, grpcAddress: config.WEBHOOK_GRPC_ADDR, setup, outbox: { batchSize: 500, retainPublishedMs: 0 } });
