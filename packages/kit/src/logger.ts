import { trace } from '@opentelemetry/api';
import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs with the service name on every line. Secrets never reach a log line: headers and
 * fields that can carry them are redacted here once, whatever a caller logs.
 */
export function createLogger(service: string, level = 'info'): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Lines written inside a traced request carry its ids, so logs and traces join up.
    mixin() {
      const span = trace.getActiveSpan();
      if (!span) return {};
      const { traceId, spanId } = span.spanContext();
      return { traceId, spanId };
    },
    redact: {
      paths: [
        'apiKey',
        '*.apiKey',
        'key',
        'secret',
        '*.secret',
        'token',
        'req.headers["x-api-key"]',
        'req.headers.authorization',
        'req.headers["x-admin-token"]',
        'headers["x-api-key"]',
        'headers.authorization',
      ],
      censor: '[redacted]',
    },
  });
}
