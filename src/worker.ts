import pino from 'pino';
import { ConfigError, loadConfig } from './config.js';
import { loggerOptions } from './http/logging.js';
import { startRuntime } from './runtime.js';
import { createTrainingRunner, recoveryOptions } from './training/wiring.js';

/**
 * A worker-only process (`npm run worker`): trains queued jobs from the shared database with
 * WORKERS threads (at least one). Add processes on any machine to add capacity.
 */
async function main() {
  const config = loadConfig();
  const logger = pino(loggerOptions(config.logLevel));
  const runtime = await startRuntime(config, logger);
  const threads = Math.max(1, config.workers);
  const training = createTrainingRunner(runtime.services, runtime.database, { threads, nice: config.trainingNice, ...recoveryOptions(config) });
  await runtime.services.events.record({ type: 2, procedure: 'worker.start', text: `Training worker starting (pid ${process.pid}, ${threads} threads)` });
  training.runner.start();
  process.stdout.write(`Worker ${training.runner.workerId} training with ${threads} thread(s)\n`);

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'worker shutting down; handing running jobs back');
    await training.close();
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(error instanceof ConfigError ? `${error.message}\n` : `Worker failed: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
