import '@mailer/telemetry/register';
import { runService } from '@mailer/kit/service';
import { loadSubscriberConfig } from './config';
import { setup } from './server';

const config = loadSubscriberConfig();
void runService({ name: 'subscriber', config, grpcAddress: config.SUBSCRIBER_GRPC_ADDR, setup });
