import module from 'node:module';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { returnYoungGenerationWhenIdle } from './idle-memory.js';

/** The API process: HTTP, plus WORKERS training threads and the chat auto-message scheduler. */
async function main() {
  // Node >= 22.1 (the image's Node 24) keeps the compiled code of the modules loaded below in a cache
  // under the temporary directory; Node 20 has no such cache and goes on without it.
  (module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
  const config = loadConfig();
  // Start in seconds (docs/benchmarks.md, first start): the database opens first (the embedded one boots in
  // its worker thread) while this thread loads the services' and the HTTP side's modules, and the routes are
  // built while the first start's administrator password is hashed (scrypt runs on libuv's pool).
  const database = openDatabase(config);
  database.catch(() => undefined); // awaited by startRuntime; a failure is reported from there
  const [{ default: pino }, { loggerOptions }, { createMetrics }, { ensureAdministrator, refreshJobGauges, startRuntime }, { onShutdownSignal }, { createTrainingRunner, recoveryOptions }] =
    await Promise.all([import('pino'), import('./http/logging.js'), import('./observability/metrics.js'), import('./runtime.js'), import('./shutdown.js'), import('./jobs-runner/wiring.js')]);
  const logger = pino(loggerOptions(config.logLevel));
  const metrics = createMetrics();
  const [runtime, { buildApp }] = await Promise.all([startRuntime(config, logger, metrics, { database }), import('./app.js')]);
  const [app] = await Promise.all([
    buildApp({
      config,
      services: runtime.services,
      logger,
      metrics,
      readiness: () => runtime.readiness(),
      beforeScrape: () => refreshJobGauges(runtime, metrics),
    }),
    ensureAdministrator(runtime),
  ]);
  const training = config.workers > 0 ? createTrainingRunner(runtime.services, { threads: config.workers, nice: config.trainingNice, metrics, ...recoveryOptions(config) }) : undefined;
  const autoMessages = runtime.services.chat.startAutoMessageScheduler({
    onError: (err: unknown) => logger.warn({ err }, 'chat auto messages failed'),
  });
  await runtime.services.events.record({ type: 2, procedure: 'server.start', text: `API server starting (pid ${process.pid}, ${config.workers} training threads)` });

  onShutdownSignal(logger, config.shutdownGraceMs, async () => {
    // Stop accepting; idle keep-alive connections close at once, requests in flight get the grace, then
    // whatever is still open (a stalled upload, a slow client) is cut. Running trainings go back to the queue.
    const cut = setTimeout(() => {
      logger.warn('shutdown grace over: closing the connections still open');
      app.server.closeAllConnections();
    }, config.shutdownGraceMs);
    await app.close();
    clearTimeout(cut);
    await autoMessages.stop();
    await training?.close();
    await runtime.close();
  });

  // The embedded database's thread cannot come back in this process (its data directory's state is
  // unknown): exit, so a supervisor restarts the service; the next start recovers the directory and
  // hands jobs left Running back to the queue. Meanwhile every request was answered 'unreachable'.
  void runtime.database.pglite?.lost?.then((error) => {
    logger.fatal({ err: error }, 'the embedded database thread stopped; exiting for a restart');
    process.exit(1);
  });

  const address = await app.listen({ port: config.port, host: config.host });
  training?.runner.start();
  // V8's default young generation (fast under load) without keeping it while idle (docs/benchmarks.md,
  // footprint).
  returnYoungGenerationWhenIdle();
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
