import type { Config } from '../config.js';
import type { DatabaseHandle } from '../db/database.js';
import type { Metrics } from '../observability/metrics.js';
import type { Services } from '../services.js';
import { createJobQueueRepository } from '../domain/jobs/job-queue.repository.js';
import { createTrainingPool } from './pool.js';
import { createRunner, type Runner, type RunnerOptions } from './runner.js';

/** The orphaned-job recovery timings of JOB_STALE_AFTER_MS / JOB_RECOVER_EVERY_MS. */
export const recoveryOptions = (config: Pick<Config, 'jobStaleAfterMs' | 'jobRecoverEveryMs'>) => ({
  staleAfterMs: config.jobStaleAfterMs,
  recoverMs: config.jobRecoverEveryMs,
});

/**
 * Builds this process's training runner from the domain services: the same services the HTTP
 * endpoints use write the status records, network weights, outputs and consumption records.
 */
export function createTrainingRunner(
  services: Services,
  database: DatabaseHandle,
  options: Omit<RunnerOptions, 'concurrency'> & { threads: number; nice?: number; metrics?: Metrics },
): { runner: Runner; close(): Promise<void> } {
  const pool = createTrainingPool({ maxThreads: options.threads, niceIncrement: options.nice });
  const queue = createJobQueueRepository(database.db);
  const runner = createRunner(
    {
      queue,
      pool,
      events: services.events,
      readTrainingSet: (jobId) => services.data.readTrainingSet(jobId),
      writeOutput: (jobId, header, rows, intervals) => services.data.writeOutput(jobId, rows, header, intervals),
      paramsForJob: (jobId) => services.appRecords.paramsForJob(jobId),
      saveModel: (trainingId, userId, model) => services.networks.saveModel(trainingId, userId, model),
      stats: {
        open: (record) => services.stats.open(record),
        update: (id, change) => services.stats.update(id, change),
        terminate: (id, status, change) => services.stats.terminate(id, status, change),
      },
      recordConsumption: async (record) => void (await services.consumptions.record(record)),
      observe: options.metrics
        ? (outcome, seconds) => {
            options.metrics!.trainingsTotal.inc({ outcome });
            if (outcome === 'finished') options.metrics!.trainingDuration.observe(seconds);
          }
        : undefined,
    },
    { ...options, concurrency: options.threads },
  );
  const unsubscribe = services.jobSignals.subscribe({ aborted: (id) => runner.abortLocal(id), queued: () => runner.poke() });
  return {
    runner,
    async close() {
      unsubscribe();
      await runner.stop();
      await pool.close();
    },
  };
}
