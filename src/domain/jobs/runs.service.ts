import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { TrainingResult, TrainingSetReport } from '../../training/index.js';
import type { ConsumptionsService } from '../consumptions/consumptions.service.js';
import type { DataService } from '../data/data.service.js';
import { STAT_STATUS } from '../model-records/stat-status.js';
import type { NetworksService } from '../model-records/networks.service.js';
import type { StatsService } from '../model-records/stats.service.js';
import { TRAINING_STATUS } from '../trainings/training-status.js';
import { explainSelection } from './explanation.js';
import type { JobPartsRepository } from './job-parts.repository.js';
import type { ClaimedJob, JobQueueRepository } from './job-queue.repository.js';

/** A training run that ended well, as its runner measured it; what `runs.complete` stores. */
export interface CompletedRun {
  job: ClaimedJob;
  /** The runner that holds the job: the job is Finished only while it still is this worker's. */
  worker: string;
  /** The forecast rows' columns, the upload's header. */
  header: string[];
  result: TrainingResult;
  /** How the training set was cut (a job trained whole; a job in parts has none). */
  set?: TrainingSetReport;
  statId?: number;
  host: string;
  pid: number;
  /** The training threads' memory peak. */
  ramBytes: number;
  cpuSeconds: number;
  /** Disk the run used besides its stored model (the spooled training set, the parts' answers). */
  diskBytes: number;
}

const MB = 1024 * 1024;
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Rolls the transaction back when the job stopped being the worker's meanwhile (aborted, taken away). */
class NoLongerTheWorkers extends Error {}

/**
 * What the training runner needs from the domain: the queue of jobs and of their parts, and the end of a
 * run. The end is one transaction: the forecast rows, the model, the training's figures, the job Finished,
 * the run's status record and its consumption record commit together or not at all, so a process that dies
 * between two of them leaves neither a Finished job without its output nor an output of a job still
 * Running (the queue re-queues a job whose worker died while storing, STORING_ADVANCE).
 */
export function createRunsService(deps: {
  db: Kysely<Database>;
  queue: JobQueueRepository;
  parts: JobPartsRepository;
  data: Pick<DataService, 'writeOutput'>;
  networks: Pick<NetworksService, 'saveModel'>;
  stats: Pick<StatsService, 'terminate'>;
  consumptions: Pick<ConsumptionsService, 'record'>;
}) {
  const { db, queue, data, networks, stats, consumptions } = deps;

  return {
    queue,
    parts: deps.parts,

    /**
     * Stores a run's results and marks its job Finished, all in one transaction; answers the output's id,
     * or undefined when the job is no longer the worker's (aborted or taken away meanwhile), in which case
     * nothing was written.
     */
    async complete(run: CompletedRun): Promise<number | undefined> {
      const { job, result } = run;
      const intervals = result.forecasts.some((f) => f.intervals) ? result.forecasts.map((f) => f.intervals) : undefined;
      const { inputs, outputs, neurons, layersCreated } = result.figures;
      const hidden = Array.from({ length: layersCreated }, () => Math.round(neurons / Math.max(1, layersCreated)));
      try {
        return await db.transaction().execute(async (trx) => {
          const outputId = await data.writeOutput(job.id, result.forecasts.map((f) => f.values), run.header, intervals, trx);
          const { bytes: modelBytes } = await networks.saveModel(job.training_id, job.user_id, result.model, trx);
          await queue.setTrainingResult(
            job.training_id,
            {
              status: TRAINING_STATUS.Trained,
              neurons,
              inputs,
              outputs,
              layers_requested: result.figures.layersRequested,
              layers_created: layersCreated,
              success_rate: result.successRate,
            },
            trx,
          );
          if (!(await queue.finish(job.id, run.worker, [inputs, ...hidden, outputs].join('-'), result.selection, trx))) throw new NoLongerTheWorkers();
          if (run.statId !== undefined) {
            await stats.terminate(run.statId, STAT_STATUS.Finished, { text: finishedText(outputId, result, run.set), advance: 100 }, trx);
          }
          await consumptions.record(
            {
              userId: job.user_id,
              jobId: job.id,
              trainingId: job.training_id,
              appName: job.app_name,
              host: run.host,
              pid: run.pid,
              ramMb: round(run.ramBytes / MB),
              // The training threads' own CPU (thread-cpu.ts); their wall time where the platform cannot say, which
              // on a busy machine also counts the waits for a core.
              cpuSeconds: round(run.cpuSeconds),
              diskMb: round((modelBytes + run.diskBytes) / MB, 4),
            },
            trx,
          );
          return outputId;
        });
      } catch (error) {
        if (error instanceof NoLongerTheWorkers) return undefined;
        throw error;
      }
    },
  };
}

export type RunsService = ReturnType<typeof createRunsService>;

/** The Finished status record: which model won and why, then the run's own figures (bench/train parses the figures' fragment). */
function finishedText(outputId: number, result: TrainingResult, set: TrainingSetReport | undefined): string {
  const { timing: t, metrics: m } = result;
  const figures = `trained ${t.samples} samples x ${t.epochs} epochs in ${Math.round(t.trainMs)} ms (${Math.round(t.samplesEpochsPerSecond)} samples x epochs/s); hold-out of ${m.validationRows} rows: MAE ${m.mae.toPrecision(6)}, RMSE ${m.rmse.toPrecision(6)}, MSE ${(m.rmse ** 2).toPrecision(6)}, MAPE ${m.mape === null ? 'n/a' : `${m.mape.toFixed(2)}%`}, seasonal-naive MAE ${m.baselineMae.toPrecision(6)}`;
  return `finished: output ${outputId}, success rate ${result.successRate}%; ${explainSelection(result.selection)}; ${figures}${set ? `; ${describeSet(set)}` : ''}`;
}

/** How the training set was cut, for the run's status record. */
function describeSet(set: TrainingSetReport): string {
  const cut = set.cap.rule === 'none' ? 'all rows' : `${set.known} known rows (${set.cap.rule}, cap ${set.cap.rows})`;
  return `training set: ${set.rows} rows uploaded, ${cut} and ${set.forecast} to forecast; memory estimate ${set.estimateMb} MB of ${set.budgetMb} MB`;
}
