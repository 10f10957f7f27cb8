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
