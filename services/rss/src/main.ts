import '@mailer/telemetry/register';
import { runService } from '@mailer/kit/service';
import { loadRssConfig } from './config';
import { setup } from './server';
import { NATS_ACCESS } from './nats-access';

const config = loadRssConfig();
void runService({ name: 'rss', config, nats: NATS_ACCESS, grpcAddress: config.RSS_GRPC_ADDR, setup });
