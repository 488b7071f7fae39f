import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { SelectionReport } from '../../training/index.js';
import { STAT_STATUS } from '../model-records/stat-status.js';
import { TRAINING_STATUS } from '../trainings/training-status.js';
import { JOB_STATUS } from './job-status.js';

/**
 * The job state machine's storage: every write of `jobs.status` is a statement of this module (see the
 * transitions in jobs.service.ts). The training queue is the jobs table itself: Pending jobs are claimed
 * with `FOR UPDATE SKIP LOCKED`, so several worker processes on one Postgres each take a different job
 * and a job runs once. A running job carries its worker's heartbeat; a job whose heartbeat stops (worker
 * killed) is failed with the reason (recoverStale), while jobs handed back at shutdown are re-queued. We
 * use this rather than pg-boss because the job row already is the unit of work with its own status codes, and the same SQL runs on PGlite.
 */
export interface ClaimedJob {
  id: number;
  user_id: number;
  training_id: number;
  app_name: string;
  attempts: number;
}

/** What the engine writes on a training when a run ends (model figures only when it finished). */
export interface TrainingResult {
  status: number;
  neurons?: number;
  inputs?: number;
  outputs?: number;
  layers_requested?: number;
  layers_created?: number;
  success_rate?: number;
}

/** Heartbeats older than this mark a running job as orphaned. */
export const STALE_AFTER_MS = 30_000;
/**
 * A running job's progress while its worker stores the results: training reports at most 99, so a job that
 * went stale at this mark lost its worker after the training had ended, and is queued again (recoverStale).
 */
export const STORING_ADVANCE = 100;
/** The text of the status record of a run whose worker died while it stored the results (see recoverStale). */
export const STORING_LOST_TEXT = 'its worker process died while storing the results, none of which were kept: queued to train again';
/** Why recovery failed a job whose worker stopped beating (see recoverStale). */
export const ORPHANED_REASON = 'Its worker process died while training it (out of memory?); it was not retried so it cannot take another worker down. Set the job Pending to train it again';

const ACTIVE = [JOB_STATUS.Pending, JOB_STATUS.Running];
const now = () => sql<Date>`now()`;

/**
 * Created -> Pending, the one statement for it. The data upload runs it inside its own transaction (so
 * the data and the queued state commit together); `markPending` runs it on its own.
 */
export const markPendingQuery = (db: Kysely<Database>, jobId: number) =>
  db.updateTable('jobs').set({ status: JOB_STATUS.Pending, updated_at: now() }).where('id', '=', jobId).where('status', '=', JOB_STATUS.Created);

/** Ends a job in parts' traces: its plan and parts (the outcomes are in the job's output by then, or never will be). */
export async function discardParts(db: Kysely<Database> | Transaction<Database>, jobId: number): Promise<void> {
  await db.deleteFrom('job_parts').where('job_id', '=', jobId).execute();
  await db.deleteFrom('job_plans').where('job_id', '=', jobId).execute();
}

/**
 * Pending -> Running for one job, for this worker (its training becomes Training); undefined when another
 * worker holds or took it. The one claim of a job, whichever queue chose it (job-parts.repository.ts too).
 */
export async function claimPendingJob(trx: Transaction<Database>, id: number, worker: string): Promise<ClaimedJob | undefined> {
  const locked = await trx.selectFrom('jobs').select('id').where('id', '=', id).where('status', '=', JOB_STATUS.Pending).forUpdate().skipLocked().executeTakeFirst();
  if (!locked) return undefined;
  const job = await trx
    .updateTable('jobs')
    .set({
      status: JOB_STATUS.Running,
      worker,
      advance: 0,
      error: null,
      selection: null,
      abort_requested: false,
      attempts: sql<number>`attempts + 1`,
      started_at: now(),
      heartbeat_at: now(),
      updated_at: now(),
    })
    .where('id', '=', id)
    .returning(['id', 'user_id', 'training_id', 'app_name', 'attempts'])
    .executeTakeFirstOrThrow();
  await trx.updateTable('trainings').set({ status: TRAINING_STATUS.Training, updated_at: now() }).where('id', '=', job.training_id).execute();
  return job;
}

/**
 * Running -> Failed with the reason, whoever runs it (a job in parts has no one worker): its training Failed,
 * its open status record closed as Failed, its units gone. Answers its owner, or undefined when it was not Running.
 */
export async function failRunningJob(trx: Transaction<Database>, jobId: number, reason: string): Promise<{ userId: number } | undefined> {
  const job = await trx
    .updateTable('jobs')
    .set({ status: JOB_STATUS.Failed, error: reason.slice(0, 2000), worker: null, finished_at: now(), updated_at: now() })
    .where('id', '=', jobId)
    .where('status', '=', JOB_STATUS.Running)
    .returning(['training_id', 'user_id'])
    .executeTakeFirst();
  if (!job) return undefined;
  await trx.updateTable('trainings').set({ status: TRAINING_STATUS.Failed, updated_at: now() }).where('id', '=', job.training_id).execute();
  await trx
    .updateTable('stat_records')
    .set({ status: STAT_STATUS.Failed, text: `failed: ${reason}`.slice(0, 2000), updated_at: now(), terminated_at: now() })
    .where('job_id', '=', jobId)
    .where('status', '=', STAT_STATUS.Open)
    .execute();
  await discardParts(trx, jobId);
  return { userId: job.user_id };
}

export function createJobQueueRepository(db: Kysely<Database>) {
  /** Beats for a job this worker still owns; answers false when the job was aborted or taken away. */
  async function heartbeat(jobId: number, worker: string, advance?: number): Promise<boolean> {
    const result = await db
      .updateTable('jobs')
      .set({ heartbeat_at: now(), ...(advance === undefined ? {} : { advance }) })
      .where('id', '=', jobId)
      .where('worker', '=', worker)
      .where('status', '=', JOB_STATUS.Running)
      .where('abort_requested', '=', false)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  return {
    /** Created -> Pending; false when the job was not Created. */
    async markPending(jobId: number): Promise<boolean> {
      const result = await markPendingQuery(db, jobId).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /**
     * Pending or Running -> Aborted in one statement, so an engine claiming the job at the same moment
     * either sees Aborted or is told by `abort_requested`. Answers whether it was Running, or undefined
     * when the job was in no abortable state.
     */
    async abortIfActive(id: number): Promise<{ wasRunning: boolean } | undefined> {
      return db.transaction().execute(async (trx) => {
        const row = await trx
          .updateTable('jobs')
          .set({
            status: JOB_STATUS.Aborted,
            abort_requested: sql<boolean>`status = ${JOB_STATUS.Running}`,
            finished_at: new Date(),
            updated_at: new Date(),
          })
          .where('id', '=', id)
          .where('status', 'in', ACTIVE)
          .returning(['abort_requested', 'training_id', 'advance'])
          .executeTakeFirst();
        if (!row) return undefined;
        // A job in parts has no process of its own to close its records: its parts stop at their next beat.
        const inParts = await trx.selectFrom('job_plans').select('job_id').where('job_id', '=', id).executeTakeFirst();
        if (inParts) {
          await trx.updateTable('trainings').set({ status: TRAINING_STATUS.Created, updated_at: now() }).where('id', '=', row.training_id).execute();
          await trx
            .updateTable('stat_records')
            .set({ status: STAT_STATUS.Aborted, text: `aborted at ${Math.round(row.advance)}%`, updated_at: now(), terminated_at: now() })
            .where('job_id', '=', id)
            .where('status', '=', STAT_STATUS.Open)
            .execute();
          await discardParts(trx, id);
        }
        return { wasRunning: row.abort_requested };
      });
    },

    /** Finished, Failed or Aborted -> Pending again, with the engine's traces cleared. */
    async requeue(id: number, fromStatus: number): Promise<boolean> {
      await discardParts(db, id);
      const result = await db
        .updateTable('jobs')
        .set({
          status: JOB_STATUS.Pending,
          advance: 0,
          abort_requested: false,
          error: null,
          selection: null,
          worker: null,
          heartbeat_at: null,
          started_at: null,
          finished_at: null,
          updated_at: new Date(),
        })
        .where('id', '=', id)
        .where('status', '=', fromStatus)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** Pending -> Running for the oldest Pending job; its training becomes Training. */
    async claimNext(worker: string): Promise<ClaimedJob | undefined> {
      return db.transaction().execute(async (trx) => {
        const next = await trx.selectFrom('jobs').select('id').where('status', '=', JOB_STATUS.Pending).orderBy('id').limit(1).forUpdate().skipLocked().executeTakeFirst();
        return next ? claimPendingJob(trx, next.id, worker) : undefined;
      });
    },

    heartbeat,

    /** The training ended and its results are being stored (STORING_ADVANCE); false when the job is no longer this worker's. */
    storing: (jobId: number, worker: string): Promise<boolean> => heartbeat(jobId, worker, STORING_ADVANCE),

    /**
     * Running -> Finished, for the worker that runs it, with the engine's explanation of the run; false when
     * the job is no longer this worker's. `executor`: the transaction that stores the run's results.
     */
    async finish(jobId: number, worker: string, nets: string, selection: SelectionReport | undefined, executor: Kysely<Database> = db): Promise<boolean> {
      const result = await executor
        .updateTable('jobs')
        .set({ status: JOB_STATUS.Finished, advance: 100, nets, selection: selection ? JSON.stringify(selection) : null, finished_at: now(), updated_at: now() })
        .where('id', '=', jobId)
        .where('worker', '=', worker)
        .where('status', '=', JOB_STATUS.Running)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** Running -> Failed with the reason, for the worker that runs it. */
    async fail(jobId: number, worker: string, reason: string): Promise<void> {
      await db
        .updateTable('jobs')
        .set({ status: JOB_STATUS.Failed, error: reason.slice(0, 2000), finished_at: now(), updated_at: now() })
        .where('id', '=', jobId)
        .where('worker', '=', worker)
        .where('status', '=', JOB_STATUS.Running)
        .execute();
    },

    /** Shutdown: a job this worker was running goes back to the queue without counting an attempt. */
    async handBack(jobId: number, worker: string): Promise<void> {
      await db
        .updateTable('jobs')
        .set({ status: JOB_STATUS.Pending, worker: null, advance: 0, heartbeat_at: null, attempts: sql<number>`greatest(attempts - 1, 0)`, updated_at: now() })
        .where('id', '=', jobId)
        .where('worker', '=', worker)
        .where('status', '=', JOB_STATUS.Running)
        .execute();
    },

    async setTrainingResult(trainingId: number, result: TrainingResult, executor: Kysely<Database> = db): Promise<void> {
      await executor.updateTable('trainings').set({ ...result, updated_at: now() }).where('id', '=', trainingId).execute();
    },

    /**
     * Running jobs whose worker stopped beating are failed with ORPHANED_REASON, never re-queued: the
     * likeliest killer of a training process is the training itself (its memory), and re-queueing it
     * would kill the next worker the same way. A job whose worker died while storing its results
     * (STORING_ADVANCE) was past its training: its results are stored in one transaction, so nothing of
     * them was kept, and it is queued again. Jobs a worker hands back at shutdown (handBack) are Pending
     * again without passing here. Answers the failed and the re-queued jobs, for the log.
     */
    async recoverStale(staleAfterMs = STALE_AFTER_MS): Promise<{ failed: number[]; requeued: number[] }> {
      const cutoff = sql<Date>`now() - make_interval(secs => ${staleAfterMs / 1000})`;
      // One transaction: the job, its training and the dead run's status record change together.
      return db.transaction().execute(async (trx) => {
        const inParts = (eb: ExpressionBuilder<Database, 'jobs'>) => eb.exists(eb.selectFrom('job_plans').select('job_plans.job_id').whereRef('job_plans.job_id', '=', 'jobs.id'));
        // A job in parts lost only its assembler: its parts are done and stored, so any process assembles it again.
        await trx
          .updateTable('jobs')
          .set({ worker: null })
          .where('status', '=', JOB_STATUS.Running)
          .where('worker', 'is not', null)
          .where('heartbeat_at', '<', cutoff)
          .where(inParts)
          .execute();
        const requeued = await trx
          .updateTable('jobs')
          .set({ status: JOB_STATUS.Pending, worker: null, advance: 0, heartbeat_at: null, started_at: null, updated_at: now() })
          .where('status', '=', JOB_STATUS.Running)
          .where('worker', 'is not', null)
          .where('heartbeat_at', '<', cutoff)
          .where('advance', '=', STORING_ADVANCE)
          .where((eb) => eb.not(inParts(eb)))
          .returning('id')
          .execute();
        if (requeued.length > 0) {
          await trx
            .updateTable('stat_records')
            .set({ status: STAT_STATUS.Aborted, text: STORING_LOST_TEXT, updated_at: now(), terminated_at: now() })
            .where('job_id', 'in', requeued.map((r) => r.id))
            .where('status', '=', STAT_STATUS.Open)
            .execute();
        }
        const failed = await trx
          .updateTable('jobs')
          .set({ status: JOB_STATUS.Failed, error: ORPHANED_REASON, finished_at: now(), updated_at: now() })
          .where('status', '=', JOB_STATUS.Running)
          .where('worker', 'is not', null)
          .where('heartbeat_at', '<', cutoff)
          .where((eb) => eb.not(inParts(eb)))
          .returning(['id', 'training_id'])
          .execute();
        if (failed.length > 0) {
          await trx.updateTable('trainings').set({ status: TRAINING_STATUS.Failed }).where('id', 'in', failed.map((f) => f.training_id)).execute();
          // The dead run's status record would otherwise stay Open forever: close it as Failed.
          await trx
            .updateTable('stat_records')
            .set({ status: STAT_STATUS.Failed, text: `failed: ${ORPHANED_REASON}`, updated_at: now(), terminated_at: now() })
            .where('job_id', 'in', failed.map((f) => f.id))
            .where('status', '=', STAT_STATUS.Open)
            .execute();
        }
        return { failed: failed.map((r) => r.id), requeued: requeued.map((r) => r.id) };
      });
    },

    /** Units of jobs in parts by state (0 queued, 1 running, 2 done): the metrics' part gauges. */
    async countParts(): Promise<{ status: number; n: number }[]> {
      const rows = await db.selectFrom('job_parts').select(['status', (eb) => eb.fn.countAll<string>().as('n')]).groupBy('status').execute();
      return rows.map((r) => ({ status: r.status, n: Number(r.n) }));
    },

    /** How many jobs are in each status, and since when the oldest of them was last changed (queued, for Pending): the metrics' queue gauges. */
    async countByStatus(): Promise<{ status: number; n: number; oldest: Date | null }[]> {
      return db
        .selectFrom('jobs')
        .select(['status', (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.min('updated_at').as('oldest')])
        .groupBy('status')
        .execute();
    },
  };
}

export type JobQueueRepository = ReturnType<typeof createJobQueueRepository>;
