import '@mailer/telemetry/register';
import { runService } from '@mailer/kit/service';
import { loadSubscriberConfig } from './config';
import { setup } from './server';
import { NATS_ACCESS } from './nats-access';

const config = loadSubscriberConfig();
void runService({
  name: 'subscriber',
  config,
  nats: NATS_ACCESS,
  grpcAddress: config.SUBSCRIBER_GRPC_ADDR,
  setup,
  // Every subscriber write emits events (a 1,000-row sync: 1,000+). Published records are deleted at
  // once (JetStream keeps the history), so memory and relay rounds stay proportional to the backlog.
  outbox: { batchSize: config.OUTBOX_BATCH_SIZE, retainPublishedMs: config.OUTBOX_RETAIN_PUBLISHED_MS },
});
