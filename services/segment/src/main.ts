import '@mailer/telemetry/register';
import { runService } from '@mailer/kit/service';
import { loadSegmentConfig } from './config';
import { setup } from './server';
import { NATS_ACCESS } from './nats-access';

const config = loadSegmentConfig();
void runService({ name: 'segment', config, nats: NATS_ACCESS, grpcAddress: config.SEGMENT_GRPC_ADDR, setup });
