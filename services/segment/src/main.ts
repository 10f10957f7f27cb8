import '@mailer/telemetry/register';
import { runService } from '@mailer/kit/service';
import { loadSegmentConfig } from './config';
import { setup } from './server';

const config = loadSegmentConfig();
void runService({ name: 'segment', config, grpcAddress: config.SEGMENT_GRPC_ADDR, setup });
