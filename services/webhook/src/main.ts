import '@mailer/telemetry/register';
import { runService } from '@mailer/kit/service';
import { loadWebhookConfig } from './config';
import { setup } from './server';

const config = loadWebhookConfig();
void runService({ name: 'webhook', config, grpcAddress: config.WEBHOOK_GRPC_ADDR, setup });
