import '@mailer/telemetry/register';
import { runService } from '@mailer/kit/service';
import { loadFormConfig } from './config';
import { setup } from './server';

const config = loadFormConfig();
void runService({ name: 'form', config, grpcAddress: config.FORM_GRPC_ADDR, setup });
