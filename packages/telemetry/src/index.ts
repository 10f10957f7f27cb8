import type { NodeSDK } from '@opentelemetry/sdk-node';

let sdk: NodeSDK | undefined;

/**
 * Starts OpenTelemetry tracing for this process. It must run before express, http or
 * @grpc/grpc-js are required, because instrumentations patch modules as they load: each
 * main.ts therefore imports `@mailer/telemetry/register` as its very first line (the gateway its
 * own `src/telemetry.ts`, which passes the key redaction of paths).
 *
 * The exporter is configured by the standard OTEL_* variables. Tracing is off unless an
 * exporter is configured (OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
 * OTEL_TRACES_EXPORTER), so a laptop run does not log failed exports to localhost:4318.
 */
export interface TelemetryOptions {
  /**
   * Applied to the path of every incoming HTTP request before it becomes a span attribute (the
   * gateway redacts key-shaped segments). The query string is never recorded: like the access log,
   * spans carry the path only.
   */
  redactPath?: (path: string) => string;
}

export function startTelemetry(serviceName: string, env: NodeJS.ProcessEnv = process.env, options: TelemetryOptions = {}): boolean {
  if (sdk) return true;
  const configured =
    env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_TRACES_EXPORTER;
  if (!configured || env.OTEL_SDK_DISABLED === 'true') return false;
  env.OTEL_SERVICE_NAME ??= serviceName;
  // Loaded only when tracing is on: the SDK and its instrumentations are tens of MB of modules (the
  // SDK's configuration validator alone is a 1.5 MB source string) that every process would
  // otherwise keep in its heap, and that garbage collection walks, for nothing.
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation } = require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express');
  const { GrpcInstrumentation } = require('@opentelemetry/instrumentation-grpc') as typeof import('@opentelemetry/instrumentation-grpc');
  sdk = new NodeSDK({
    instrumentations: [new HttpInstrumentation({ startIncomingSpanHook: incomingUrlAttributes(options.redactPath) }), new ExpressInstrumentation(), new GrpcInstrumentation()],
  });
  sdk.start();
  return true;
}

export async function stopTelemetry(): Promise<void> {
  await sdk?.shutdown();
  sdk = undefined;
}

/** Overrides the instrumentation's `url.path` and `url.query` (it records the query minus a few cloud signature names). */
function incomingUrlAttributes(redactPath: (path: string) => string = (p) => p) {
  return (request: { url?: string }) => {
    const url = request.url ?? '';
    const q = url.indexOf('?');
    return { 'url.path': redactPath(q < 0 ? url : url.slice(0, q)), ...(q < 0 ? {} : { 'url.query': 'REDACTED' }) };
  };
}
