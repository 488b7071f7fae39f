import { formatNullableTimestamp, formatTimestamp } from './time.js';
import type { JobStatus } from '../../db/tables/jobs.js';
import { explainSelection } from '../../domain/jobs/explanation.js';
import { JOB_STATUS_NAMES } from '../../domain/jobs/job-status.js';
import type { JobView } from '../../domain/jobs/jobs.repository.js';
import type { ProgressReport } from '../../domain/jobs/jobs.service.js';
import type { TrainingRow } from '../../domain/trainings/trainings.repository.js';


/**
 * Legacy Job record: ids and status as strings. `Nets` is the layer sizes of the network the job
 * trained, input to output, dash-separated (e.g. `12-24-24-1`); empty until the engine has built it.
 */
export function jobRecord(job: JobView, tz: string) {
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
export function legacyTrainingRecord(training: TrainingRow) {
  return {
    Neurons: training.neurons,
    Inputs: training.inputs,
    Outputs: training.outputs,
    LayersRequested: training.layers_requested,
    LayersCreated: training.layers_created,
  };
}

/** mode=1 Training record; `success_rate` is added so the figure PUT /trainings stores can be read back. */
export function trainingRecord(training: TrainingRow, tz: string) {
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
 * structured report (`Selection`, src/training/types.ts SelectionReport; null before a run finished).
 */
export function progressRecord(report: ProgressReport, progress: number, tz: string) {
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
