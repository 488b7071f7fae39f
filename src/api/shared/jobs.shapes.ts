import { z } from 'zod';
import { formatNullableTimestamp, formatTimestamp } from './time.js';
import type { JobStatus } from '../../db/tables/jobs.js';
import { explainSelection } from '../../domain/jobs/explanation.js';
import { JOB_STATUS_NAMES } from '../../domain/jobs/job-status.js';
import type { JobView } from '../../domain/jobs/jobs.service.js';
import type { ProgressReport } from '../../domain/jobs/jobs.service.js';
import type { TrainingRow } from '../../domain/trainings/trainings.service.js';

const int = z.number().int();
const timestamp = z.string().meta({ example: '2024-03-01 09:30:00' });

/** Job (spec 2): ids and status as strings; `Nets` the layer sizes (see jobRecord). */
export const JobRecord = z.object({
  Id: z.string(),
  Session_Id: z.string(),
  Training_Id: z.string(),
  app_name: z.string(),
  Status: z.string(),
  DateTime: timestamp,
  User_Name: z.string().nullable(),
  Nets: z.string(),
}).meta({ example: { Id: '41', Session_Id: '0', Training_Id: '9', app_name: 'forecast', Status: '1', DateTime: '2024-03-01 09:30:00', User_Name: 'Ana', Nets: '12-24-24-1' } });

/** POST /jobs (current): the new job and its training. */
export const CreatedJob = z.object({ job_id: int, training_id: int }).meta({ example: { job_id: 41, training_id: 9 } });
/** A job id (PUT /jobs, older POST /jobs). */
export const JobId = int.meta({ example: 41 });

/** Training, legacy form (GET /trainings without mode). */
export const LegacyTrainingRecord = z.strictObject({ Neurons: int, Inputs: int, Outputs: int, LayersRequested: int, LayersCreated: int }).meta({
  example: { Neurons: 24, Inputs: 12, Outputs: 1, LayersRequested: 2, LayersCreated: 2 },
});

/** Training, mode=1 form. */
export const TrainingRecord = z.strictObject({
  id: int,
  app_name: z.string(),
  description: z.string(),
  status: int,
  date: timestamp,
  neurons: int,
  inputs: int,
  outputs: int,
  layers_requested: int,
  layers_created: int,
  success_rate: z.number(),
}).meta({
  example: { id: 9, app_name: 'forecast', description: 'Weekly sales', status: 2, date: '2024-03-01 09:30:00', neurons: 24, inputs: 12, outputs: 1, layers_requested: 2, layers_created: 2, success_rate: 87 },
});
/** A training id (POST /trainings). */
export const TrainingId = int.meta({ example: 9 });

/**
 * The forecasting engine's explanation of how each output's model was chosen (so a user sees what won,
 * against which candidates and the best naive).
 */
const SelectionReport = z.object({
  modelFamily: z.enum(['auto', 'network']),
  scheme: z.enum(['rolling-origin', 'k-fold', 'holdout']),
  windows: z.number(),
  horizon: z.number(),
  frequency: z.string(),
  season: z.number(),
  periods: z.array(z.number()).optional(),
  timeNotes: z.array(z.string()).optional(),
  outputs: z.array(
    z.object({
      column: z.string(),
      kind: z.enum(['numeric', 'categorical']),
      metric: z.enum(['MAE', 'error rate', 'MASE']),
      chosen: z.string(),
      description: z.string(),
      error: z.number(),
      baseline: z.object({ name: z.string(), error: z.number() }),
      candidates: z.array(z.object({ name: z.string(), description: z.string(), error: z.number().nullable(), note: z.string().optional() })),
      /** How the answer departs from the backtest's choice and why, one sentence each. */
      notes: z.array(z.string()).optional(),
    }),
  ),
  panel: z
    .object({
      keys: z.array(z.string()),
      keySource: z.enum(['detected', 'stated']),
      series: z.number(),
      shortest: z.number(),
      longest: z.number(),
      wins: z.record(z.string(), z.number()),
      perSeries: z.array(
        z.object({
          key: z.array(z.string()),
          rows: z.number(),
          outputs: z.array(z.object({ column: z.string(), chosen: z.string(), error: z.number(), baseline: z.object({ name: z.string(), error: z.number() }) })),
          note: z.string().optional(),
        }),
      ),
    })
    .optional(),
});

/** GET /jobs_progress: `{Advance}`; progress=1 adds `Status` and `Results`, progress=2 adds `Stat`. */
export const ProgressRecord = z.union([
  z.strictObject({ Advance: z.number() }),
  z.strictObject({
    Advance: z.number(),
    Status: z.string(),
    Results: z.object({
      Training_Id: z.string(),
      Neurons: int,
      Inputs: int,
      Outputs: int,
      LayersRequested: int,
      LayersCreated: int,
      SuccessRate: z.number(),
      Nets: z.string(),
    }),
  }),
  z.strictObject({
    Advance: z.number(),
    Stat: z.object({
      Job_Id: z.string(),
      Status: z.string(),
      Status_Name: z.string(),
      Advance: z.number(),
      Abort_Requested: z.enum(['0', '1']),
      Worker: z.string().nullable(),
      Text: z.string(),
      Started: timestamp.nullable(),
      Heartbeat: timestamp.nullable(),
      Finished: timestamp.nullable(),
      Explanation: z.string(),
      Selection: SelectionReport.nullable(),
    }),
  }),
]).meta({ example: { Advance: 45 } });

/**
 * Legacy Job record: ids and status as strings. `Nets` is the layer sizes of the network the job
 * trained, input to output, dash-separated (e.g. `12-24-24-1`); empty until the engine has built it.
 */
export function jobRecord(job: JobView, tz: string): z.output<typeof JobRecord> {
  return {
    Id: String(job.id),
    Session_Id: String(job.session_id ?? 0),
    Training_Id: String(job.training_id),
    app_name: job.app_name,
    Status: String(job.status),
    DateTime: formatTimestamp(job.created_at, tz),
    User_Name: job.user_name,
    Nets: job.nets,
  };
}

/** Legacy-mode Training record (GET /trainings without mode). */
export function legacyTrainingRecord(training: TrainingRow): z.output<typeof LegacyTrainingRecord> {
  return {
    Neurons: training.neurons,
    Inputs: training.inputs,
    Outputs: training.outputs,
    LayersRequested: training.layers_requested,
    LayersCreated: training.layers_created,
  };
}

/** mode=1 Training record; `success_rate` is added so the figure PUT /trainings stores can be read back. */
export function trainingRecord(training: TrainingRow, tz: string): z.output<typeof TrainingRecord> {
  return {
    id: training.id,
    app_name: training.app_name,
    description: training.description,
    status: training.status,
    date: formatTimestamp(training.created_at, tz),
    neurons: training.neurons,
    inputs: training.inputs,
    outputs: training.outputs,
    layers_requested: training.layers_requested,
    layers_created: training.layers_created,
    success_rate: training.success_rate,
  };
}

/**
 * GET /jobs_progress: `{Advance}` (0-100). `progress`=1 adds `Status` and `Results`: the training's
 * figures as the engine has reached them. `progress`=2 adds `Stat`: the job's status record, with the
 * engine's explanation of a finished run as text (`Explanation`, also in the status record) and as the
 * structured report (`Selection`, src/training/core/types.ts SelectionReport; null before a run finished).
 */
export function progressRecord(report: ProgressReport, progress: number, tz: string): z.output<typeof ProgressRecord> {
  const job = report.job;
  if (!job || progress === 0) return { Advance: report.advance };
  if (progress === 1) {
    return {
      Advance: report.advance,
      Status: String(job.status),
      Results: {
        Training_Id: String(job.training_id),
        Neurons: job.neurons,
        Inputs: job.inputs,
        Outputs: job.outputs,
        LayersRequested: job.layers_requested,
        LayersCreated: job.layers_created,
        SuccessRate: job.success_rate,
        Nets: job.nets,
      },
    };
  }
  return {
    Advance: report.advance,
    Stat: {
      Job_Id: String(job.id),
      Status: String(job.status),
      Status_Name: JOB_STATUS_NAMES[job.status as JobStatus] ?? String(job.status),
      Advance: job.advance,
      Abort_Requested: job.abort_requested ? '1' : '0',
      Worker: job.worker,
      Text: job.error ?? '',
      Started: formatNullableTimestamp(job.started_at, tz),
      Heartbeat: formatNullableTimestamp(job.heartbeat_at, tz),
      Finished: formatNullableTimestamp(job.finished_at, tz),
      Explanation: job.selection ? explainSelection(job.selection) : '',
      Selection: job.selection,
    },
  };
}
