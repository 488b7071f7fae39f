import { DateTime } from 'luxon';
import type { JobStatus } from '../../db/tables/jobs.js';
import { isAdmin, type Caller } from '../caller.js';
import { Errors } from '../errors.js';
import type { Clock, EventLog } from '../ports.js';
import { silentEventLog } from '../ports.js';
import type { TrainingsRepository } from '../trainings/trainings.repository.js';
import { ownerScope } from '../shared/access.js';
import type { DataCleaner } from '../trainings/trainings.service.js';
import { instantRange } from '../shared/date-range.js';
import { isActive, isEnded, isJobStatus, JOB_STATUS, JOB_STATUS_NAMES } from './job-status.js';
import type { JobQueueRepository } from './job-queue.repository.js';
import type { JobView, JobsRepository } from './jobs.repository.js';

export type { JobView };

/** Tells the training engine something about a job; must not throw into the request that caused it. */
export type JobListener = (jobId: number) => void | Promise<void>;

export interface JobsServiceDeps {
  jobs: JobsRepository;
  /** Every status write: the state machine's storage. */
  queue: JobQueueRepository;
  trainings: TrainingsRepository;
  clock: Clock;
  /** Consumers need an active subscription to an app to create jobs for it. */
  hasActiveSubscription(userId: number, appName: string): Promise<boolean>;
  /** Removes a job's uploaded data and results (the data area's deleteForJob). */
  dataCleaner?: DataCleaner;
  /** Called after a job became Aborted, so the engine can stop its thread at once. */
  onAbort?: JobListener;
  /** Called after a job became Pending, so the engine can claim it without waiting for a poll. */
  onQueued?: JobListener;
  events?: EventLog;
}

export interface JobQuery {
  tz: string;
  /** 0 or absent: every job the caller may see. */
  jobId?: number;
  /** 0 or absent: any status (legacy default 0 means "no filter"). */
  status?: number;
  statusFilter?: number[];
  search?: string;
  dateFrom?: string;
  dateTo?: string;
  appName?: string;
}

export interface NewJob {
  appName: string;
  tz: string;
  newTraining: boolean;
  /** Continue this training; without it and without newTraining, the caller's latest for the app. */
  trainingId?: number;
  description?: string;
}

export interface JobUpdate {
  jobId: number;
  trainingId: number;
  appName: string;
  /** Absent: unchanged (a default of 0 would send ended jobs back to Created, which the machine forbids). */
  status?: number;
}

export interface ProgressQuery {
  jobId?: number;
  appName?: string;
  /** Non-zero: the mean advance over all the caller's jobs of the app. */
  reqType: number;
  /** 0 the advance only; 1 plus the training's actual results; 2 plus the job's status record. */
  progress: number;
}

export interface ProgressReport {
  advance: number;
  job?: JobView;
}

const statusName = (status: number) => JOB_STATUS_NAMES[status as JobStatus] ?? String(status);
const noListener: JobListener = () => undefined;
const noCleaner: DataCleaner = async () => undefined;

/**
 * The job state machine (codes in job-status.ts; every status write is a statement of job-queue.repository.ts):
 *   Created -> Pending      data uploaded (markPendingQuery, inside the upload's transaction; markPending)
 *   Pending -> Running      the engine claims it (claimNext)
 *   Running -> Finished | Failed   the engine (finish, fail); a dead worker's job is re-queued or failed (recoverStale)
 *   Pending | Running -> Aborted   POST /job_aborts, PUT /jobs status Aborted (abortIfActive)
 *   Finished | Failed | Aborted -> Pending   PUT /jobs status Pending, run again (requeue)
 * A Pending or Running job belongs to the engine: it cannot be deleted, re-targeted or lose its data.
 */
export function createJobsService(deps: JobsServiceDeps) {
  const { jobs, queue, trainings } = deps;
  const dataCleaner = deps.dataCleaner ?? noCleaner;
  const events = deps.events ?? silentEventLog;

  function tell(listener: JobListener | undefined, jobId: number, what: string) {
    // The state is already stored; a failing listener must not turn a done request into an error.
    Promise.resolve()
      .then(() => (listener ?? noListener)(jobId))
      .catch((error: unknown) =>
        events.record({ type: 3, procedure: 'jobs', text: `${what} listener failed for job ${jobId}: ${String(error)}` }).catch(() => undefined),
      );
  }

  async function visible(caller: Caller, jobId: number): Promise<JobView> {
    const job = await jobs.findVisible(jobId, ownerScope(caller));
    if (!job) throw Errors.notFound('Job', jobId);
    return job;
  }

  async function assertMayUseApp(caller: Caller, appName: string): Promise<void> {
    if (isAdmin(caller)) return;
    if (!(await deps.hasActiveSubscription(caller.userId, appName))) {
      throw Errors.noActiveSubscription(appName);
    }
  }

  function refuseWhileActive(job: JobView, doing: string): void {
    if (isActive(job.status)) throw Errors.wrongState(`Job ${job.id} is ${statusName(job.status)}; abort it before ${doing}`);
  }

  const changedMeanwhile = (jobId: number) => Errors.wrongState(`Job ${jobId} changed state meanwhile; reload it and try again`);

  async function abort(caller: Caller, jobId: number): Promise<void> {
    const job = await visible(caller, jobId);
    const result = await queue.abortIfActive(job.id);
    if (!result) {
      const now = (await jobs.findVisible(job.id, undefined))?.status ?? job.status;
      throw Errors.wrongState(`Job ${job.id} is ${statusName(now)}; only a Pending or Running job can be aborted`);
    }
    tell(deps.onAbort, job.id, 'abort');
  }

  /** PUT /jobs status: only the transitions of the state machine a user may cause. */
  async function changeStatus(caller: Caller, job: JobView, status: number): Promise<void> {
    if (status === job.status) return;
    if (status === JOB_STATUS.Aborted) return abort(caller, job.id);
    if (status === JOB_STATUS.Pending && isEnded(job.status)) {
      if (!(await queue.requeue(job.id, job.status))) throw changedMeanwhile(job.id);
      tell(deps.onQueued, job.id, 'queue');
      return;
    }
    if (status === JOB_STATUS.Pending && job.status === JOB_STATUS.Created) {
      throw Errors.wrongState(`Job ${job.id} has no data yet; upload its data (POST /data) to queue it`);
    }
    if (status === JOB_STATUS.Pending) throw Errors.wrongState(`Job ${job.id} is ${statusName(job.status)}; it is already queued or running`);
    if (status === JOB_STATUS.Created) throw Errors.wrongState(`Job ${job.id} cannot go back to Created`);
    throw Errors.wrongState(`Job ${job.id}: status ${statusName(status)} is set only by the training engine`);
  }

  return {
    get: visible,

    async create(caller: Caller, input: NewJob): Promise<{ jobId: number; trainingId: number }> {
      await assertMayUseApp(caller, input.appName);
      if (input.newTraining) {
        const description =
          input.description ?? `${input.appName} ${DateTime.fromJSDate(deps.clock.now()).setZone(input.tz).toFormat('yyyy-MM-dd HH:mm:ss')}`;
        return jobs.insertWithTraining(
          { user_id: caller.userId, app_name: input.appName, description },
          { session_id: caller.sessionId },
        );
      }
      let trainingId: number;
      if (input.trainingId !== undefined) {
        const training = await trainings.findVisible(input.trainingId, ownerScope(caller));
        if (!training) throw Errors.notFound('Training', input.trainingId);
        trainingId = training.id;
      } else {
        const latest = await trainings.findLatestForApp(caller.userId, input.appName);
        if (!latest) {
          throw Errors.noTrainingFor(input.appName);
        }
        trainingId = latest.id;
      }
      const jobId = await jobs.insert({ user_id: caller.userId, training_id: trainingId, session_id: caller.sessionId, app_name: input.appName });
      return { jobId, trainingId };
    },

    async list(caller: Caller, query: JobQuery): Promise<JobView[]> {
      for (const code of [...(query.status === undefined ? [] : [query.status]), ...(query.statusFilter ?? [])]) {
        if (!isJobStatus(code)) {
          throw Errors.invalidParameter(query.statusFilter?.includes(code) ? 'status_filter' : 'status', `${code} is not a job status (0 to 5)`);
        }
      }
      let statusIn = query.statusFilter;
      if (query.status) statusIn = statusIn ? statusIn.filter((s) => s === query.status) : [query.status];
      if (statusIn?.length === 0) return [];
      return jobs.list({
        ownerId: ownerScope(caller),
        jobId: query.jobId || undefined,
        statusIn,
        appName: query.appName,
        search: query.search,
        range: instantRange(query.dateFrom, query.dateTo, query.tz),
      });
    },

    /** PUT /jobs: re-target the job (training, app) while the engine does not hold it, and/or move its status. */
    async update(caller: Caller, change: JobUpdate): Promise<number> {
      if (change.status !== undefined && !isJobStatus(change.status)) throw Errors.invalidParameter('status', `${change.status} is not a job status (0 to 5)`);
      const job = await visible(caller, change.jobId);
      if (change.trainingId !== job.training_id || change.appName !== job.app_name) {
        refuseWhileActive(job, 'changing its training or app_name');
        const training = await trainings.findVisible(change.trainingId, job.user_id);
        if (!training) throw Errors.notFound('Training', change.trainingId);
        if (change.appName !== job.app_name) await assertMayUseApp(caller, change.appName);
        if (!(await jobs.reassign(job.id, job.status, { training_id: training.id, app_name: change.appName }))) throw changedMeanwhile(job.id);
      }
      if (change.status !== undefined) await changeStatus(caller, job, change.status);
      return job.id;
    },

    async delete(caller: Caller, jobId: number): Promise<void> {
      const job = await visible(caller, jobId);
      refuseWhileActive(job, 'deleting it');
      await dataCleaner(job.id);
      if (!(await jobs.deleteIdle(job.id))) throw changedMeanwhile(job.id);
    },

    /** POST /job_aborts: Pending -> Aborted at once; Running -> Aborted with abort_requested for the engine. */
    abort,

    /** DELETE /job_data: the job's uploaded data and results go; the job stays as it is. */
    async deleteData(caller: Caller, jobId: number): Promise<void> {
      const job = await visible(caller, jobId);
      refuseWhileActive(job, 'deleting its data');
      await dataCleaner(job.id);
    },

    async progress(caller: Caller, query: ProgressQuery): Promise<ProgressReport> {
      const job = query.jobId ? await visible(caller, query.jobId) : undefined;
      if (!job && (query.reqType === 0 || query.progress !== 0)) throw Errors.missingParameter('job_id');
      let advance: number;
      if (query.reqType !== 0) {
        const appName = query.appName ?? job?.app_name;
        if (appName === undefined) throw Errors.missingParameter('app_name');
        advance = await jobs.averageAdvance(ownerScope(caller), appName);
      } else {
        advance = job!.advance;
      }
      const report: ProgressReport = { advance: Math.round(Math.min(100, Math.max(0, advance)) * 100) / 100 };
      if (query.progress !== 0) report.job = job;
      return report;
    },

    /**
     * Created -> Pending outside an upload (an upload runs the same statement in its own transaction).
     * False when the job was not Created (already queued, running or ended): nothing changes then.
     */
    async markPending(jobId: number): Promise<boolean> {
      const moved = await queue.markPending(jobId);
      if (moved) tell(deps.onQueued, jobId, 'queue');
      return moved;
    },

    countRunning: (ownerId: number | undefined) => jobs.countRunning(ownerId),

    /** Jobs per status code, for the metrics' gauges. */
    countByStatus: () => queue.countByStatus(),
    countParts: () => queue.countParts(),
  };
}

export type JobsService = ReturnType<typeof createJobsService>;
