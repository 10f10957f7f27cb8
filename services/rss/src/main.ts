import '@mailer/telemetry/register';
import { runService } from '@mailer/kit/service';
import { loadRssConfig } from './config';
import { setup } from './server';

const config = loadRssConfig();
void runService({ name: 'rss', config, grpcAddress: config.RSS_GRPC_ADDR, setup });
