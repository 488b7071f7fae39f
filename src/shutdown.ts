import type { Logger } from 'pino';

/** What closing may take beyond the grace (cutting connections, handing jobs back, closing the database). */
const AFTER_GRACE_MS = 5000;

/**
 * SIGTERM/SIGINT run `close` once (it gets `graceMs` for what is in flight, then cuts it) and exit 0. If
 * closing still hangs past the grace plus a few seconds, or a second signal comes, the process exits 1
 * at once: a deploy or restart never waits on the slowest client or thread.
 */
export function onShutdownSignal(logger: Logger, graceMs: number, close: () => Promise<void>): void {
  let closing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    closing = true;
    logger.info({ signal, graceMs }, 'shutting down');
    setTimeout(() => {
      logger.error({ afterMs: graceMs + AFTER_GRACE_MS }, 'shutdown did not finish; exiting anyway');
      process.exit(1);
    }, graceMs + AFTER_GRACE_MS).unref();
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
