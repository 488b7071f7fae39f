import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * The training queue is the jobs table itself: Pending jobs (status 1) are claimed with
 * `FOR UPDATE SKIP LOCKED`, so several worker processes on one Postgres each take a different job and
 * a job runs once. A running job carries its worker's heartbeat; a job whose heartbeat stops (worker
 * killed) is re-queued once, then failed with the reason. We use this rather than pg-boss because the
 * job row already is the unit of work with its own status codes, and the same SQL runs on PGlite.
 */
export interface ClaimedJob {
  id: number;
  user_id: number;
  training_id: number;
  app_name: string;
  attempts: number;
}

/** Heartbeats older than this mark a running job as orphaned. */
export const STALE_AFTER_MS = 30_000;
/** A job is re-queued after a dead worker this many times, then failed. */
export const MAX_ATTEMPTS = 2;

export function createQueueRepository(db: Kysely<Database>) {
  return {
    async claimNext(worker: string): Promise<ClaimedJob | undefined> {
      return db.transaction().execute(async (trx) => {
        const next = await trx
          .selectFrom('jobs')
          .select('id')
          .where('status', '=', 1)
          .orderBy('id')
          .limit(1)
          .forUpdate()
          .skipLocked()
          .executeTakeFirst();
        if (!next) return undefined;
        const job = await trx
          .updateTable('jobs')
          .set({
            status: 2,
            worker,
            advance: 0,
            error: null,
            abort_requested: false,
            attempts: sql<number>`attempts + 1`,
            started_at: sql<Date>`now()`,
            heartbeat_at: sql<Date>`now()`,
            updated_at: sql<Date>`now()`,
          })
          .where('id', '=', next.id)
          .returning(['id', 'user_id', 'training_id', 'app_name', 'attempts'])
          .executeTakeFirstOrThrow();
        await trx.updateTable('trainings').set({ status: 1, updated_at: sql<Date>`now()` }).where('id', '=', job.training_id).execute();
        return job;
      });
    },

    /** Beats for a job this worker still owns; answers false when the job was aborted or taken away. */
    async heartbeat(jobId: number, worker: string, advance?: number): Promise<boolean> {
      const result = await db
        .updateTable('jobs')
        .set({ heartbeat_at: sql<Date>`now()`, ...(advance === undefined ? {} : { advance }) })
        .where('id', '=', jobId)
        .where('worker', '=', worker)
        .where('status', '=', 2)
        .where('abort_requested', '=', false)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async finish(jobId: number, worker: string, nets: string): Promise<boolean> {
      const result = await db
        .updateTable('jobs')
        .set({ status: 3, advance: 100, nets, finished_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
        .where('id', '=', jobId)
        .where('worker', '=', worker)
        .where('status', '=', 2)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async fail(jobId: number, worker: string, reason: string): Promise<void> {
      await db
        .updateTable('jobs')
        .set({ status: 4, error: reason.slice(0, 2000), finished_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
        .where('id', '=', jobId)
        .where('worker', '=', worker)
        .where('status', '=', 2)
        .execute();
    },

    /** Shutdown: a job this worker was running goes back to the queue without counting an attempt. */
    async handBack(jobId: number, worker: string): Promise<void> {
      await db
        .updateTable('jobs')
        .set({ status: 1, worker: null, advance: 0, heartbeat_at: null, attempts: sql<number>`greatest(attempts - 1, 0)`, updated_at: sql<Date>`now()` })
        .where('id', '=', jobId)
        .where('worker', '=', worker)
        .where('status', '=', 2)
        .execute();
    },

    async setTrainingResult(
      trainingId: number,
      figures: { status: number; neurons?: number; inputs?: number; outputs?: number; layers_requested?: number; layers_created?: number; success_rate?: number },
    ): Promise<void> {
      await db.updateTable('trainings').set({ ...figures, updated_at: sql<Date>`now()` }).where('id', '=', trainingId).execute();
    },

    /**
     * Running jobs whose worker stopped beating: re-queued while attempts remain, else failed with the
     * reason. Answers what it did, for the log.
     */
    async recoverStale(staleAfterMs = STALE_AFTER_MS): Promise<{ requeued: number[]; failed: number[] }> {
      const cutoff = sql<Date>`now() - make_interval(secs => ${staleAfterMs / 1000})`;
      // One transaction: a re-queued job cannot be claimed (and get a new status record) before the
      // dead run's record is closed below.
      return db.transaction().execute(async (trx) => {
        const requeued = await trx
          .updateTable('jobs')
          .set({ status: 1, worker: null, advance: 0, heartbeat_at: null, updated_at: sql<Date>`now()` })
          .where('status', '=', 2)
          .where('heartbeat_at', '<', cutoff)
          .where('attempts', '<', MAX_ATTEMPTS)
          .returning('id')
          .execute();
        const failed = await trx
          .updateTable('jobs')
          .set({
            status: 4,
            error: `The worker running this job stopped responding ${MAX_ATTEMPTS} times; giving up`,
            finished_at: sql<Date>`now()`,
            updated_at: sql<Date>`now()`,
          })
          .where('status', '=', 2)
          .where('heartbeat_at', '<', cutoff)
          .where('attempts', '>=', MAX_ATTEMPTS)
          .returning(['id', 'training_id'])
          .execute();
        if (failed.length > 0) {
          await trx.updateTable('trainings').set({ status: 3 }).where('id', 'in', failed.map((f) => f.training_id)).execute();
        }
        const orphaned = [...requeued.map((r) => r.id), ...failed.map((r) => r.id)];
        if (orphaned.length > 0) {
          // The dead run's status record would otherwise stay Open forever: close it as Failed.
          await trx
            .updateTable('stat_records')
            .set({ status: 2, text: 'the worker running this job stopped responding', updated_at: sql<Date>`now()`, terminated_at: sql<Date>`now()` })
            .where('job_id', 'in', orphaned)
            .where('status', '=', 0)
            .execute();
        }
        return { requeued: requeued.map((r) => r.id), failed: failed.map((r) => r.id) };
      });
    },

    async pendingCount(): Promise<number> {
      const row = await db.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 1).executeTakeFirstOrThrow();
      return row.n;
    },
  };
}

export type QueueRepository = ReturnType<typeof createQueueRepository>;
