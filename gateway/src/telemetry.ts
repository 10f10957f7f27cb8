// Side-effect module, the gateway's `@mailer/telemetry/register`: first import of main.ts, so the
// instrumentations patch http and express before they load. Spans of incoming requests carry
// the path with key-shaped segments redacted, as the access log does, and no query string.
import { startTelemetry } from '@mailer/telemetry';
import { redactApiKeys } from './accounts/api-key';

startTelemetry(process.env.OTEL_SERVICE_NAME ?? process.env.MAILER_SERVICE ?? 'gateway', process.env, { redactPath: redactApiKeys });
