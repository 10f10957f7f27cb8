// Side-effect module: `import '@mailer/telemetry/register'` first in every main.ts.
// The service name comes from OTEL_SERVICE_NAME or MAILER_SERVICE (set by the runner and the chart).
import { startTelemetry } from './index';

startTelemetry(process.env.OTEL_SERVICE_NAME ?? process.env.MAILER_SERVICE ?? 'mailer');
