import { modelColumns, type ForecastInterval, type TrainedModel } from '../../training/index.js';
import type { Caller } from '../caller.js';
import { Errors } from '../errors.js';
import { requireJob, requireTraining, type OwnedJob, type OwnershipLookups } from '../shared/access.js';
import type { NetworksService } from './networks.service.js';

/** Where a predicted row goes: one new output record of the job (the data area's writer); answers its id. */
export type ForecastOutputWriter = (output: {
  jobId: number;
  header: string[];
  rows: Record<string, string>[];
  /** Per row, the prediction intervals of its numeric outputs (kept out of the legacy view, see data.writeOutput). */
  intervals?: (Record<string, ForecastInterval> | undefined)[];
}) => Promise<number>;

export interface ForecastRequest {
  jobId?: number;
  trainingId?: number;
  /** Posted cells keyed by column name (blank cells count as not given). */
  cells: Record<string, string>;
}

export interface ForecastResult {
  jobId: number;
  trainingId: number;
  outputId: number;
  header: string[];
  row: Record<string, string>;
}

export const MAX_FORECAST_COLUMNS = 500;

/**
 * The older POST /forecasts.php: one posted row is run through the stored model of a job's training
 * (reloaded from the database, so a restart changes nothing) and kept as a new output record of that job,
 * readable with GET /data output=1 like the training's own forecasts. Any model version works: only
 * training/run/predict.ts and training/run/model-columns.ts look inside a model.
 */
export function createForecastsService(deps: { networks: NetworksService; lookups: OwnershipLookups; writeOutput: ForecastOutputWriter }) {
  const { networks, lookups, writeOutput } = deps;

  /** job_id, else training_id's newest finished job, else the caller's newest finished job with a network. */
  async function resolveJob(caller: Caller, request: ForecastRequest): Promise<OwnedJob> {
    if (request.jobId !== undefined) {
      const job = await requireJob(lookups, caller, request.jobId);
      if (request.trainingId !== undefined && request.trainingId !== job.training_id) {
        throw Errors.invalidParameter('training_id', `job ${job.id} runs training ${job.training_id}, not ${request.trainingId}`);
      }
      return job;
    }
    if (request.trainingId !== undefined) {
      const training = await requireTraining(lookups, caller, request.trainingId);
      const jobId = await networks.latestFinishedJobWithModel(training.user_id, training.id);
      if (jobId === undefined) throw Errors.wrongState(`Training ${training.id} has no finished job with a trained network`);
      return (await lookups.job(jobId, undefined))!;
    }
    const jobId = await networks.latestFinishedJobWithModel(caller.userId);
    if (jobId === undefined) throw Errors.wrongState('You have no finished job with a trained network to forecast with');
    return (await lookups.job(jobId, undefined))!;
  }

  return {
    async forecast(caller: Caller, request: ForecastRequest): Promise<ForecastResult> {
      const given = Object.entries(request.cells).filter(([, value]) => value.trim() !== '');
      if (given.length === 0) throw Errors.missingParameter('{column-name}');
      if (given.length > MAX_FORECAST_COLUMNS) throw Errors.invalidParameter('{column-name}', `at most ${MAX_FORECAST_COLUMNS} columns`);
      const job = await resolveJob(caller, request);
      const model: TrainedModel | undefined = await networks.loadModel(job.training_id);
      if (!model) throw Errors.notTrained(job.training_id);
      const columns = modelColumns(model);
      if (columns && !given.some(([name]) => columns.inputs.includes(name))) {
        throw Errors.invalidParameter('{column-name}', `none of the posted columns is an input of the network (inputs: ${columns.inputs.join(', ')})`);
      }
      // Output cells are what is predicted; posted values for them are replaced, other columns pass through.
      const outputs = columns?.outputs ?? [];
      const cells = Object.fromEntries(given.filter(([name]) => !outputs.includes(name)));
      const asked = [...Object.keys(cells), ...outputs];
      // The engine (brain.js, trees, matrices: a third of the API's module loading) loads with the first
      // forecast, not at every start (so the service starts in seconds: docs/benchmarks.md, first start).
      const { predictWithIntervals, isTrainingError } = await import('../../training/index.js');
      let predicted: ReturnType<typeof predictWithIntervals>;
      try {
        predicted = predictWithIntervals(model, asked, [cells]);
      } catch (error) {
        // The model's own refusal (a panel model asked for a series it has none of): the caller's row is wrong.
        if (isTrainingError(error) && error.code === 'invalid_input') throw Errors.invalidParameter('{column-name}', error.message);
        throw error;
      }
      const { values: row, intervals } = predicted[0]!;
      // A model that does not name its outputs still answers them: they are the keys predict() added.
      const header = [...asked, ...Object.keys(row).filter((name) => !asked.includes(name))];
      const outputId = await writeOutput({ jobId: job.id, header, rows: [row], intervals: intervals && [intervals] });
      return { jobId: job.id, trainingId: job.training_id, outputId, header, row };
    },
  };
}

export type ForecastsService = ReturnType<typeof createForecastsService>;
