import pino from 'pino';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { loggerOptions } from './http/logging.js';
import { ensureAdministrator, startRuntime } from './runtime.js';

async function main() {
  const config = loadConfig();
  const logger = pino(loggerOptions(config.logLevel));
  const runtime = await startRuntime(config, logger);
  await ensureAdministrator(runtime);
  const app = await buildApp({ config, services: runtime.services, logger, readiness: () => runtime.readiness() });
  await runtime.services.events.record({ type: 2, procedure: 'server.start', text: `API server starting (pid ${process.pid})` });

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    // Stop accepting, let in-flight requests finish, then close the database.
    await app.close();
    await runtime.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  const address = await app.listen({ port: config.port, host: config.host });
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
