import pino from 'pino';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { loggerOptions } from './http/logging.js';
import { createMetrics } from './observability/metrics.js';
import { ensureAdministrator, refreshJobGauges, startRuntime } from './runtime.js';
import { createTrainingRunner, recoveryOptions } from './training/wiring.js';

/** The API process: HTTP, plus WORKERS training threads and the chat auto-message scheduler. */
async function main() {
  const config = loadConfig();
  const logger = pino(loggerOptions(config.logLevel));
  const metrics = createMetrics();
  const runtime = await startRuntime(config, logger, metrics);
  await ensureAdministrator(runtime);
  const app = await buildApp({
    config,
    services: runtime.services,
    logger,
    metrics,
    readiness: () => runtime.readiness(),
    beforeScrape: () => refreshJobGauges(runtime, metrics),
  });
  const training = config.workers > 0 ? createTrainingRunner(runtime.services, runtime.database, { threads: config.workers, nice: config.trainingNice, metrics, ...recoveryOptions(config) }) : undefined;
  const autoMessages = runtime.services.chat.startAutoMessageScheduler({
    onError: (err: unknown) => logger.warn({ err }, 'chat auto messages failed'),
  });
  await runtime.services.events.record({ type: 2, procedure: 'server.start', text: `API server starting (pid ${process.pid}, ${config.workers} training threads)` });

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    // Stop accepting and finish in-flight requests; running trainings go back to the queue.
    await app.close();
    await autoMessages.stop();
    await training?.close();
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  const address = await app.listen({ port: config.port, host: config.host });
  training?.runner.start();
  const shown = address.replace('0.0.0.0', 'localhost').replace('[::]', 'localhost');
  process.stdout.write(`Listening on ${shown} (API at ${shown}/api/202203010900/, docs at ${shown}/docs)\n`);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`Failed to start: ${(error as Error)?.stack ?? String(error)}\n`);
  }
  process.exit(1);
});
