import {
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceDefinition,
  type handleUnaryCall,
  type sendUnaryData,
  type UntypedServiceImplementation,
  status,
} from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import { DomainError } from './errors';
import { REQUEST_ID_KEY, runInCall, sanitizeRequestId } from './call-context';
import { grpcCallers, type ServiceName } from './addresses';
import { SERVICE_TOKEN_KEY, serviceTokens } from './service-token';

// Domain errors that say the caller asked for something wrong: info. The others (UNAVAILABLE,
// RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, ...) say this service or a dependency is struggling: warn.
const CALLER_CODES = new Set<status>([
  status.INVALID_ARGUMENT,
  status.NOT_FOUND,
  status.ALREADY_EXISTS,
  status.FAILED_PRECONDITION,
  status.OUT_OF_RANGE,
  status.PERMISSION_DENIED,
  status.UNAUTHENTICATED,
]);

/** A unary handler written as an async function: return the response or throw a DomainError. */
export type AsyncHandlers<S> = {
  // ts-proto's server interfaces extend grpc-js's index-signature type: keep the named methods only.
  [K in keyof S as string extends K ? never : K]: S[K] extends handleUnaryCall<infer Req, infer Res>
    ? (request: Req, call: ServerUnaryCall<Req, Res>) => Promise<Res>
    : never;
};

export interface GrpcServerOptions {
  logger: Logger;
  metrics: Metrics;
  /** Connections are closed after this age so clients reconnect and pods rebalance. */
  maxConnectionAgeMs?: number;
  /**
   * Refuse calls without a valid service token (UNAUTHENTICATED) or from a process GRPC_CALLS does
   * not let call `service` (PERMISSION_DENIED). grpc.health.v1 stays open for probes.
   */
  auth?: { service: ServiceName; secret: string };
}

/**
 * The gRPC server every service runs: keepalive, max connection age, grpc.health.v1, RED
 * metrics and one error mapping for all handlers. Each call runs in a CallContext (call-context.ts):
 * the caller's `x-request-id` (or a new one) and the RPC bound to a child logger, which logs the
 * call's outcome and which outgoing gRPC calls forward.
 */
export function createGrpcServer(opts: GrpcServerOptions) {
  const { logger, metrics } = opts;
  const server = new Server({
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 10_000,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.max_connection_age_ms': opts.maxConnectionAgeMs ?? 5 * 60_000,
    'grpc.max_connection_age_grace_ms': 30_000,
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
  });
  // '' is the whole server's status (readiness: store and NATS reachable). 'liveness' only says the
  // process is alive, so a dependency outage takes pods out of rotation instead of restarting them.
  const health = new HealthImplementation({ '': 'NOT_SERVING', liveness: 'SERVING' });
  health.addToServer(server);
  const serviceNames: string[] = [];
  const checkCaller = opts.auth ? callerCheck(opts.auth.service, opts.auth.secret) : undefined;

  function add<S extends UntypedServiceImplementation>(definition: ServiceDefinition<S>, handlers: AsyncHandlers<S>): void {
    const impl: UntypedServiceImplementation = {};
    for (const [name, method] of Object.entries(definition)) {
      const handler = (handlers as Record<string, (req: unknown, call: ServerUnaryCall<unknown, unknown>) => Promise<unknown>>)[name];
      if (!handler) throw new Error(`no handler for ${method.path}`);
      impl[name] = wrapUnary(method.path, handler);
      const serviceName = method.path.split('/')[1];
      if (!serviceNames.includes(serviceName)) {
        serviceNames.push(serviceName);
        health.setStatus(serviceName, 'NOT_SERVING');
      }
    }
    server.addService(definition, impl);
  }

  function wrapUnary(path: string, handler: (req: unknown, call: ServerUnaryCall<unknown, unknown>) => Promise<unknown>) {
    return (call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) => {
      const started = process.hrtime.bigint();
      const stop = metrics.grpcSeconds.startTimer({ method: path });
      const requestId = sanitizeRequestId(call.metadata.get(REQUEST_ID_KEY)[0]);
      // The child logger is made on first use: most successful calls log nothing at the default level.
      let child: Logger | undefined;
      const ctx = {
        requestId,
        rpc: path,
        get log(): Logger {
          return (child ??= logger.child({ requestId, rpc: path }));
        },
      };
      const durationMs = () => Math.round(Number(process.hrtime.bigint() - started) / 1e6);
      const refused = checkCaller?.(call.metadata.get(SERVICE_TOKEN_KEY)[0]);
      if (refused) {
        stop();
        metrics.grpcHandled.inc({ method: path, code: status[refused.code] });
        ctx.log.warn({ code: status[refused.code], reason: refused.reason, durationMs: durationMs() }, 'rpc refused: caller not authenticated or not allowed');
        callback({ code: refused.code, details: refused.details });
        return;
      }
      // Outcome lines carry the status and errorId only: never the request (bodies hold personal
      // data) nor the domain error's message (it can quote an email address); the client has it.
      runInCall(ctx, () => handler(call.request, call)).then(
        (response) => {
          metrics.grpcHandled.inc({ method: path, code: 'OK' });
          stop();
          if (logger.isLevelEnabled('debug')) ctx.log.debug({ code: 'OK', durationMs: durationMs() }, 'rpc handled');
          callback(null, response);
        },
        (err: unknown) => {
          stop();
          if (err instanceof DomainError) {
            const code = status[err.code];
            metrics.grpcHandled.inc({ method: path, code });
            ctx.log[CALLER_CODES.has(err.code) ? 'info' : 'warn']({ code, errorId: err.errorId, durationMs: durationMs() }, 'rpc refused');
            callback({ code: err.code, details: err.message, metadata: err.toMetadata() });
            return;
          }
          metrics.grpcHandled.inc({ method: path, code: 'INTERNAL' });
          ctx.log.error({ err, code: 'INTERNAL', durationMs: durationMs() }, 'rpc failed: unhandled error in gRPC handler');
          callback({ code: status.INTERNAL, details: 'internal error' });
        },
      );
    };
  }

  let stopping = false;
  function setServing(serving: boolean): void {
    // Once shutting down, a health check that still finds the store and NATS fine changes nothing.
    if (stopping) return;
    const s = serving ? 'SERVING' : 'NOT_SERVING';
    health.setStatus('', s);
    for (const name of serviceNames) health.setStatus(name, s);
  }

  async function listen(address: string): Promise<number> {
    return new Promise((resolve, reject) =>
      server.bindAsync(address, ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
    );
  }

  /**
   * NOT_SERVING first (readiness probes fail, load balancers stop sending), calls still served for
   * `delayMs` (the orchestrator's time to stop routing new connections here), then `tryShutdown`:
   * no new connection, GOAWAY on the open ones (a call the client sends meanwhile is refused and
   * retried by it elsewhere), calls in flight finish; whatever still runs after `deadlineMs` is cut.
   */
  async function shutdown(deadlineMs = 10_000, delayMs = 0): Promise<void> {
    setServing(false);
    stopping = true;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, deadlineMs);
      server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  return { server, add, listen, setServing, shutdown };
}
export type GrpcServer = ReturnType<typeof createGrpcServer>;

type Refusal = { code: status; details: string; reason: string };

/** Checks a call's `authorization` value: a valid token, from a process allowed to call `service`. */
function callerCheck(service: ServiceName, secret: string): (header: unknown) => Refusal | undefined {
  const tokens = serviceTokens(secret);
  const callers = new Set<string>(grpcCallers(service));
  return (header) => {
    const check = tokens.verify(typeof header === 'string' ? header : undefined);
    // The details never say which part failed: a prober learns nothing; the log has the reason.
    if (!check.ok) return { code: status.UNAUTHENTICATED, details: 'a valid service token is required', reason: check.reason };
    if (!callers.has(check.caller)) return { code: status.PERMISSION_DENIED, details: `${check.caller} may not call the ${service} service`, reason: `caller ${check.caller}` };
    return undefined;
  };
}
