import type http from 'node:http';
import type { Logger } from './logger';

/**
 * Runs the given shutdown steps once, in order, on SIGTERM or SIGINT, then exits. A second
 * signal, or steps that overrun the deadline, exit at once: Kubernetes' grace period and a
 * developer's second Ctrl-C both mean "now".
 */
export function onShutdown(logger: Logger, steps: Array<() => Promise<unknown>>, deadlineMs = 15_000): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error('shutdown deadline exceeded; exiting');
      process.exit(1);
    }, deadlineMs);
    timer.unref();
    for (const step of steps) {
      try {
        await step();
      } catch (err) {
        logger.error({ err }, 'shutdown step failed');
      }
    }
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/** Re-evaluates a readiness check on an interval (store and NATS reachable) and reports changes. */
export function watchHealth(check: () => Promise<boolean>, report: (ok: boolean) => void, intervalMs = 5_000): () => void {
  let last: boolean | undefined;
  const tick = async () => {
    let ok = false;
    try {
      ok = await check();
    } catch {
      ok = false;
    }
    if (ok !== last) report(ok);
    last = ok;
  };
  void tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Makes an HTTP server stoppable without half-answered requests and without waiting for clients that
 * keep their connections alive forever. Install it right after creating the server (it must see every
 * request); the returned function, on shutdown: stops accepting connections, closes the idle ones,
 * lets requests in flight finish and answers them and any later request on an open connection with
 * `Connection: close` (so each busy connection ends after its current answer), and after `graceMs`
 * closes whatever is still open. Resolves once every connection is gone.
 */
export function gracefulHttpClose(server: http.Server): (graceMs: number) => Promise<void> {
  let closing = false;
  const inFlight = new Set<http.ServerResponse>();
  server.prependListener('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    if (closing) {
      res.setHeader('Connection', 'close');
      return;
    }
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });
  let closed: Promise<void> | undefined;
  return (graceMs) =>
    (closed ??= new Promise<void>((resolve) => {
      closing = true;
      // Answers already on their way (headers sent) end their connection at the grace bound at the latest.
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      server.closeIdleConnections();
    }));
}
