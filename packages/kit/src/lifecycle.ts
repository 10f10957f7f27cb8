import type http from 'node:http';
import net from 'node:net';
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

/** How long a keep-alive connection idle when the listener closes may still bring a last request. */
const IDLE_LINGER_MS = 1_000;

/**
 * Makes an HTTP server stoppable without dropping a request. Install it right after creating the
 * server (it must see every request); the returned function, on shutdown:
 * - answers every request from now on (and those in flight that have not answered yet) with
 *   `Connection: close`, so each keep-alive connection ends after its next answer and its client
 *   opens the next one elsewhere;
 * - keeps accepting connections for `delayMs` (the time a load balancer takes to stop sending new
 *   ones after the replica said it stops), then stops accepting;
 * - closes the connections still idle a moment later (IDLE_LINGER_MS): closing one at once would
 *   race a request its client is sending right now, which then meets a reset;
 * - after `graceMs` from then, closes whatever is still open. Resolves once every connection is gone.
 */
export function gracefulHttpClose(server: http.Server): (graceMs: number, delayMs?: number) => Promise<void> {
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
  return (graceMs, delayMs = 0) =>
    (closed ??= new Promise<void>((resolve) => {
      closing = true;
      // Answers already on their way (headers sent) end their connection at the grace bound at the latest.
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
      setTimeout(() => {
        const idle = setTimeout(() => server.closeIdleConnections(), Math.min(IDLE_LINGER_MS, graceMs));
        const all = setTimeout(() => server.closeAllConnections(), graceMs);
        // net.Server's close: http.Server's own (Node >= 19) would also close the idle connections at once.
        net.Server.prototype.close.call(server, () => {
          clearTimeout(idle);
          clearTimeout(all);
          resolve();
        });
      }, delayMs);
    }));
}
