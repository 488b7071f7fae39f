import { createServer, type Server } from 'node:http';
import pino from 'pino';
import { ConfigError, loadConfig } from './config.js';
import { Errors } from './domain/errors.js';
import { failure, ok } from './http/envelope.js';
import { loggerOptions } from './http/logging.js';
import { startRuntime, type Runtime } from './runtime.js';
import { onShutdownSignal } from './shutdown.js';
import { createTrainingRunner, recoveryOptions } from './jobs-runner/wiring.js';

/**
 * A worker-only process (`npm run worker`): trains queued jobs from the shared database with
 * WORKERS threads (at least one). Add processes on any machine to add capacity.
 */
async function main() {
  const config = loadConfig();
  const logger = pino(loggerOptions(config.logLevel));
  const runtime = await startRuntime(config, logger);
  const threads = Math.max(1, config.workers);
  const training = createTrainingRunner(runtime.services, { threads, nice: config.trainingNice, ...recoveryOptions(config) });
  await runtime.services.events.record({ type: 2, procedure: 'worker.start', text: `Training worker starting (pid ${process.pid}, ${threads} threads)` });
  training.runner.start();
  const health = config.workerHealthPort === undefined ? undefined : await serveHealth(runtime, config.workerHealthPort, config.host);
  const probes = health ? `; probes at http://${config.host}:${config.workerHealthPort}/healthz and /readyz` : '';
  process.stdout.write(`Worker ${training.runner.workerId} training with ${threads} thread(s)${probes}\n`);

  // Running jobs are aborted and handed back to the queue; a thread that does not stop within the grace is left behind.
  onShutdownSignal(logger, config.shutdownGraceMs, async () => {
    health?.close();
    health?.closeAllConnections();
    await training.close();
    await runtime.close();
  });
}

/**
 * The worker serves no API; its container probe gets /healthz (the process is up) and /readyz (the
 * database is reachable, migrations current) on a port of its own, in the envelope.
 */
function serveHealth(runtime: Runtime, port: number, host: string): Promise<Server> {
  const server = createServer((request, response) => {
    const send = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    const path = (request.url ?? '/').split('?')[0]!;
    if (path === '/healthz') return send(200, ok('ok'));
    if (path === '/readyz') {
      runtime.readiness().then(
        (state) => (state.ready ? send(200, ok('ready')) : send(503, failure(`not ready: ${state.reason ?? 'unknown'}`))),
        (error: Error) => send(503, failure(`not ready: ${error.message}`)),
      );
      return;
    }
    send(404, failure(Errors.unknownResource(`${request.method ?? 'GET'} ${path.slice(0, 200)}`).message));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

main().catch((error: unknown) => {
  process.stderr.write(error instanceof ConfigError ? `${error.message}\n` : `Worker failed: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
