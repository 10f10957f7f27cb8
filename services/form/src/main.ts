import '@mailer/telemetry/register';
import { runService } from '@mailer/kit/service';
import { loadFormConfig } from './config';
import { setup } from './server';
import { NATS_ACCESS } from './nats-access';

const config = loadFormConfig();
void runService({ name: 'form', config, nats: NATS_ACCESS, grpcAddress: config.FORM_GRPC_ADDR, setup });
