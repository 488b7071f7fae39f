import { join } from 'node:path';
import type { Config } from '../config.js';
import type { Metrics } from '../observability/metrics.js';
import type { Services } from '../services.js';
import { createTrainingPool } from '../training/index.js';
import { createRunner, type Runner, type RunnerOptions } from './runner.js';

/**
 * The runner's settings from the configuration: orphaned-job recovery (JOB_STALE_AFTER_MS,
 * JOB_RECOVER_EVERY_MS), the training-set spool (DATA_DIR/training-spool) and each training's row cap
 * and memory budget (TRAINING_MAX_ROWS, TRAINING_MEMORY_MB).
 */
export const recoveryOptions = (config: Pick<Config, 'jobStaleAfterMs' | 'jobRecoverEveryMs' | 'dataDir' | 'trainingMemoryMb' | 'trainingMaxRows' | 'trainingPartUnits'>) => ({
  staleAfterMs: config.jobStaleAfterMs,
  recoverMs: config.jobRecoverEveryMs,
  spoolDir: join(config.dataDir, 'training-spool'),
  limits: { maxRows: config.trainingMaxRows, budgetMb: config.trainingMemoryMb, partUnits: config.trainingPartUnits },
});

/**
 * Builds this process's training runner from the domain services (services.ts, the one composition root):
 * the same services the HTTP endpoints use write the status records, network weights, outputs and
 * consumption records.
 */
export function createTrainingRunner(
  services: Services,
  options: Omit<RunnerOptions, 'concurrency'> & {
    threads: number;
    nice?: number;
    metrics?: Metrics;
    /** The training threads' heap limit in MB; default the memory budget (limits.budgetMb). */
    heapMb?: number;
  },
): { runner: Runner; close(): Promise<void> } {
  const pool = createTrainingPool({ maxThreads: options.threads, niceIncrement: options.nice, memoryMb: options.heapMb ?? options.limits?.budgetMb });
  const runner = createRunner(
    {
      queue: services.runs.queue,
      parts: services.runs.parts,
      pool,
      events: services.events,
      spoolTrainingSet: (jobId, path) => services.data.spoolTrainingSet(jobId, path),
      recordKinds: (jobId, kinds) => services.data.recordKinds(jobId, kinds),
      paramsForJob: (jobId) => services.appRecords.paramsForJob(jobId),
      completeRun: (run) => services.runs.complete(run),
      stats: {
        open: (record) => services.stats.open(record),
        update: (id, change) => services.stats.update(id, change),
        terminate: (id, status, change) => services.stats.terminate(id, status, change),
      },
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
