import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { JOB_STATUS } from './job-status.js';
import { claimPendingJob, discardParts, failRunningJob, type ClaimedJob } from './job-queue.repository.js';

/**
 * The queue of units of work, so one job's series spread over every process: Pending jobs, the parts of jobs in parts in stages (PART_STAGE: the
 * global model's rounds, the groups of series scored, the choice across the series, the same groups refitted;
 * a part is claimable once every part of a lower stage of its job is done), and the assembly of a job whose
 * parts are all done. Any training thread of any process claims the next unit with `FOR UPDATE SKIP LOCKED`,
 * so each runs once; the owner whose last claim is
 * oldest goes first (owner_turns), so another user's small job waits at most one part's time behind a big one.
 * A part whose worker stops beating is queued again (recoverStaleParts); one that took its worker down
 * MAX_PART_ATTEMPTS times fails its job, as a whole job would (job-queue.repository.ts recoverStale).
 *
 * We keep our own tables rather than pg-boss or Graphile Worker: the embedded PGlite must run the same queue,
 * and pg-boss runs there only through an executor that writes parameter values into the SQL text
 * (timgit/pg-boss#563) while Graphile Worker needs a Postgres server (LISTEN/NOTIFY); neither orders claims by
 * owner turns with a stage that waits for another; and a part is claimed beside the job row it belongs to,
 * with its status codes, in one transaction.
 */
export const PART_STATUS = { Queued: 0, Running: 1, Done: 2 } as const;
/**
 * The stages of a job in parts, in the order they run (job_parts.stage): the global model's rounds (task: the
 * round's number), the groups of series scored (task: the group's series), the one choice across the series
 * (task: the selection options; it reads every score's answer), the same groups refitted (task: the number of
 * the group's score part, whose task and answer it reads, so the series' rows are stored once).
 */
export const PART_STAGE = { Round: 1, Score: 2, Choose: 3, Fit: 4 } as const;
export type PartStage = (typeof PART_STAGE)[keyof typeof PART_STAGE];
/** A part that took its worker down this many times fails its job instead of taking another. */
export const MAX_PART_ATTEMPTS = 3;
/** Advance of a job once planned (the engine's PLANNING_SHARE); its units count the rest, up to 99 until it is Finished. */
export const PLANNED_ADVANCE = 10;
/**
 * Advance once every unit is done; the assembly moves the bar from here to 99 as it reads the units' answers
 * (on 10,000 series it took 4.6 s, which the bar spent standing at 99).
 */
export const UNITS_DONE_ADVANCE = 97;

export type ClaimedUnit =
  | { kind: 'job'; job: ClaimedJob }
  | { kind: 'part'; jobId: number; part: number; stage: PartStage; owner: number; attempts: number; task: string }
  | { kind: 'assemble'; jobId: number; owner: number };

/** What a job in parts stores when its planning is done. */
export interface StoredPlan {
  plan: string;
  header: string[];
  global: string | null;
  statId: number | undefined;
  cpuSeconds: number | undefined;
  peakBytes: number;
  rounds: { cost: number }[];
  /** The groups of series: each is queued twice, scored and then refitted. */
  parts: { task: string; cost: number }[];
  /** The choice across series' task. */
  choice: string;
}

const now = () => sql<Date>`now()`;
/** Parts inserted per statement: a part's task is up to a few megabytes. */
const INSERT_BATCH = 16;

async function takeTurn(trx: Transaction<Database>, owner: number): Promise<void> {
  await trx
    .insertInto('owner_turns')
    .values({ user_id: owner, last_claim_at: now() })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ last_claim_at: now() }))
    .execute();
}

export function createJobPartsRepository(db: Kysely<Database>) {
  async function claimPart(trx: Transaction<Database>, jobId: number, part: number, worker: string) {
    const locked = await trx
      .selectFrom('job_parts')
      .select('part')
      .where('job_id', '=', jobId)
      .where('part', '=', part)
      .where('status', '=', PART_STATUS.Queued)
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
    if (!locked) return undefined;
    return trx
      .updateTable('job_parts')
      .set({ status: PART_STATUS.Running, worker, attempts: sql<number>`attempts + 1`, started_at: now(), heartbeat_at: now() })
      .where('job_id', '=', jobId)
      .where('part', '=', part)
      .returning(['job_id', 'part', 'stage', 'owner', 'attempts', 'task'])
      .executeTakeFirstOrThrow();
  }

  /** A job in parts fails with the reason (a part's training error): its parts go, its records close. */
  const failJob = (jobId: number, reason: string) => db.transaction().execute((trx) => failRunningJob(trx, jobId, reason));

  return {
    /**
     * The next unit of work for this worker: first the assembly of a job whose parts are all done (it ends a
     * job), then, by owner turns (the oldest last claim first, an owner never served first), a Pending job or a
     * queued part (only once every part of a lower stage of its job is done); within one owner in queue order.
     * Undefined when nothing is claimable.
     */
    async claimNext(worker: string): Promise<ClaimedUnit | undefined> {
      return db.transaction().execute(async (trx) => {
        const assembly = await trx
          .selectFrom('jobs as j')
          .innerJoin('job_plans as pl', 'pl.job_id', 'j.id')
          .select(['j.id', 'j.user_id'])
          .where('j.status', '=', JOB_STATUS.Running)
          .where('j.worker', 'is', null)
          .where('j.abort_requested', '=', false)
          .where((eb) => eb.not(eb.exists(eb.selectFrom('job_parts as p').select('p.part').whereRef('p.job_id', '=', 'j.id').where('p.status', '<>', PART_STATUS.Done))))
          .limit(1)
          .forUpdate('j')
          .skipLocked()
          .executeTakeFirst();
        if (assembly) {
          await trx.updateTable('jobs').set({ worker, heartbeat_at: now() }).where('id', '=', assembly.id).execute();
          return { kind: 'assemble', jobId: assembly.id, owner: assembly.user_id };
        }
        const candidates = await sql<{ kind: 'job' | 'part'; job_id: number; part: number }>`
          select c.kind, c.job_id, c.part
          from (
            select 'job' as kind, j.id as job_id, 0 as part, j.user_id as owner, j.updated_at as queued
            from jobs j where j.status = ${JOB_STATUS.Pending}
            union all
            select 'part' as kind, p.job_id, p.part, p.owner, p.queued_at as queued
            from job_parts p join jobs j on j.id = p.job_id
            where p.status = ${PART_STATUS.Queued} and j.status = ${JOB_STATUS.Running} and not j.abort_requested
              and not exists (
                select 1 from job_parts q where q.job_id = p.job_id and q.stage < p.stage and q.status <> ${PART_STATUS.Done})
          ) c
          left join owner_turns t on t.user_id = c.owner
          order by t.last_claim_at asc nulls first, c.queued, c.job_id, c.part
          limit 8`.execute(trx);
        for (const c of candidates.rows) {
          if (c.kind === 'job') {
            const job = await claimPendingJob(trx, c.job_id, worker);
            if (!job) continue;
            await takeTurn(trx, job.user_id);
            return { kind: 'job', job };
          }
          const part = await claimPart(trx, c.job_id, c.part, worker);
          if (!part) continue;
          await takeTurn(trx, part.owner);
          return { kind: 'part', jobId: part.job_id, part: part.part, stage: part.stage as PartStage, owner: part.owner, attempts: part.attempts, task: part.task };
        }
        return undefined;
      });
    },

    /**
     * A planned job's units go into the queue and the job leaves its planner (worker null: any process may
     * assemble it). False when the job is no longer this worker's (aborted meanwhile): nothing is stored.
     */
    async storePlan(jobId: number, owner: number, worker: string, stored: StoredPlan): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const job = await trx
          .updateTable('jobs')
          .set({ worker: null, heartbeat_at: now(), advance: PLANNED_ADVANCE })
          .where('id', '=', jobId)
          .where('worker', '=', worker)
          .where('status', '=', JOB_STATUS.Running)
          .where('abort_requested', '=', false)
          .returning('id')
          .executeTakeFirst();
        if (!job) return false;
        await discardParts(trx, jobId);
        await trx
          .insertInto('job_plans')
          .values({
            job_id: jobId,
            plan: stored.plan,
            header: JSON.stringify(stored.header),
            global: stored.global,
            stat_id: stored.statId ?? null,
            cpu_seconds: stored.cpuSeconds ?? null,
            peak_bytes: stored.peakBytes,
            parts: stored.rounds.length + 2 * stored.parts.length + 1,
          })
          .execute();
        const scored = stored.rounds.length;
        const choice = scored + stored.parts.length;
        const rows = [
          ...stored.rounds.map((r, i) => ({ job_id: jobId, part: i, stage: PART_STAGE.Round, owner, cost: r.cost, task: String(i) })),
          ...stored.parts.map((p, i) => ({ job_id: jobId, part: scored + i, stage: PART_STAGE.Score, owner, cost: p.cost, task: p.task })),
          { job_id: jobId, part: choice, stage: PART_STAGE.Choose, owner, cost: 0, task: stored.choice },
          ...stored.parts.map((p, i) => ({ job_id: jobId, part: choice + 1 + i, stage: PART_STAGE.Fit, owner, cost: p.cost, task: String(scored + i) })),
        ];
        for (let i = 0; i < rows.length; i += INSERT_BATCH) await trx.insertInto('job_parts').values(rows.slice(i, i + INSERT_BATCH)).execute();
        return true;
      });
    },

    /**
     * Whether units may appear at any moment (an idle runner then looks again soon): units of a job in parts are
     * queued or running anywhere, or a job is being trained or planned (a plan's units are queued when it ends).
     */
    async inProgress(): Promise<boolean> {
      const part = await db.selectFrom('job_parts').select('part').where('status', 'in', [PART_STATUS.Queued, PART_STATUS.Running]).limit(1).executeTakeFirst();
      if (part) return true;
      const job = await db.selectFrom('jobs').select('id').where('status', '=', JOB_STATUS.Running).where('worker', 'is not', null).limit(1).executeTakeFirst();
      return job !== undefined;
    },

    /** The global model's task of a job in parts (read by each of its rounds). */
    async globalTask(jobId: number): Promise<string | null> {
      const row = await db.selectFrom('job_plans').select('global').where('job_id', '=', jobId).executeTakeFirst();
      return row?.global ?? null;
    },

    /**
     * The answers of a job's parts of one stage, in part order: the global rounds' (read by each score part), the
     * score parts' (read by the choice), the choice's (read by each fit part).
     */
    async stageOutcomes(jobId: number, stage: PartStage): Promise<string[]> {
      const rows = await db.selectFrom('job_parts').select('outcome').where('job_id', '=', jobId).where('stage', '=', stage).orderBy('part').execute();
      return rows.map((r) => r.outcome ?? 'null');
    },

    /** The task and answer of one part of a job (a fit part reads its score part's); undefined once the job's parts are gone. */
    async partOf(jobId: number, part: number): Promise<{ task: string; outcome: string | null } | undefined> {
      return db.selectFrom('job_parts').select(['task', 'outcome']).where('job_id', '=', jobId).where('part', '=', part).executeTakeFirst();
    },

    /** Beats for a part this worker still runs; false when its job was aborted or the part taken away. */
    async heartbeatPart(jobId: number, part: number, worker: string): Promise<boolean> {
      const result = await db
        .updateTable('job_parts')
        .set({ heartbeat_at: now() })
        .where('job_id', '=', jobId)
        .where('part', '=', part)
        .where('worker', '=', worker)
        .where('status', '=', PART_STATUS.Running)
        .where((eb) =>
          eb.exists(eb.selectFrom('jobs').select('jobs.id').where('jobs.id', '=', jobId).where('jobs.status', '=', JOB_STATUS.Running).where('jobs.abort_requested', '=', false)),
        )
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /**
     * Running -> Done with its answer, for the worker that runs it; the job's advance becomes the share of
     * its parts done. Answers whether the part was still this worker's.
     */
    async completePart(jobId: number, part: number, worker: string, done: { outcome: string; cpuSeconds: number | undefined; peakBytes: number }): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const row = await trx
          .updateTable('job_parts')
          .set({ status: PART_STATUS.Done, outcome: done.outcome, cpu_seconds: done.cpuSeconds ?? null, peak_bytes: done.peakBytes, finished_at: now(), heartbeat_at: null })
          .where('job_id', '=', jobId)
          .where('part', '=', part)
          .where('worker', '=', worker)
          .where('status', '=', PART_STATUS.Running)
          .returning('part')
          .executeTakeFirst();
        if (!row) return false;
        const counts = await trx
          .selectFrom('job_parts')
          .select([(eb) => eb.fn.countAll<string>().as('all'), (eb) => eb.fn.count<string>('part').filterWhere('status', '=', PART_STATUS.Done).as('done')])
          .where('job_id', '=', jobId)
          .executeTakeFirstOrThrow();
        const share = Number(counts.done) / Math.max(1, Number(counts.all));
        const advance = Math.min(UNITS_DONE_ADVANCE, Math.round(100 * (PLANNED_ADVANCE + (UNITS_DONE_ADVANCE - PLANNED_ADVANCE) * share)) / 100);
        await trx.updateTable('jobs').set({ advance, updated_at: now() }).where('id', '=', jobId).where('status', '=', JOB_STATUS.Running).execute();
        // The run's status record (GET /stat) moves with it.
        await trx
          .updateTable('stat_records')
          .set({ advance, updated_at: now() })
          .where('id', '=', (eb) => eb.selectFrom('job_plans').select('stat_id').where('job_id', '=', jobId))
          .execute();
        return true;
      });
    },

    /** Shutdown: a part this worker was running goes back to the queue without counting an attempt. */
    async handBackPart(jobId: number, part: number, worker: string): Promise<void> {
      await db
        .updateTable('job_parts')
        .set({ status: PART_STATUS.Queued, worker: null, heartbeat_at: null, attempts: sql<number>`greatest(attempts - 1, 0)` })
        .where('job_id', '=', jobId)
        .where('part', '=', part)
        .where('worker', '=', worker)
        .where('status', '=', PART_STATUS.Running)
        .execute();
    },

    /** The job an assembly finishes, as a claim would have answered it, with when its run started. */
    async assemblyJob(jobId: number): Promise<(ClaimedJob & { startedAt: number }) | undefined> {
      const job = await db.selectFrom('jobs').select(['id', 'user_id', 'training_id', 'app_name', 'attempts', 'started_at']).where('id', '=', jobId).executeTakeFirst();
      if (!job) return undefined;
      const { started_at: startedAt, ...claimed } = job;
      return { ...claimed, startedAt: (startedAt ?? new Date()).getTime() };
    },

    /** Shutdown or a failed write: the assembly this worker took goes back for any process. */
    async releaseAssembly(jobId: number, worker: string): Promise<void> {
      await db.updateTable('jobs').set({ worker: null }).where('id', '=', jobId).where('worker', '=', worker).where('status', '=', JOB_STATUS.Running).execute();
    },

    /** Everything the assembly reads: the plan, the last stage's answers (the refitted groups') in part order, the status record, the summed CPU and the peak memory. */
    async assemblyInput(jobId: number): Promise<{ plan: string; header: string[]; parts: number; outcomes: string[]; statId: number | null; cpuSeconds: number; peakBytes: number } | undefined> {
      const plan = await db.selectFrom('job_plans').select(['plan', 'header', 'parts', 'stat_id', 'cpu_seconds', 'peak_bytes']).where('job_id', '=', jobId).executeTakeFirst();
      if (!plan) return undefined;
      const parts = await db.selectFrom('job_parts').select(['stage', 'outcome', 'cpu_seconds', 'peak_bytes']).where('job_id', '=', jobId).orderBy('part').execute();
      const last = parts.reduce((m, p) => Math.max(m, p.stage), 0);
      return {
        plan: plan.plan,
        header: JSON.parse(plan.header) as string[],
        parts: plan.parts,
        outcomes: parts.filter((p) => p.stage === last).map((p) => p.outcome ?? '[]'),
        statId: plan.stat_id,
        cpuSeconds: (plan.cpu_seconds ?? 0) + parts.reduce((s, p) => s + (p.cpu_seconds ?? 0), 0),
        peakBytes: Math.max(Number(plan.peak_bytes ?? 0), ...parts.map((p) => Number(p.peak_bytes ?? 0))),
      };
    },

    failJob,

    /**
     * Parts whose worker stopped beating go back to the queue for any process; a part that has now taken
     * MAX_PART_ATTEMPTS workers down fails its job instead. Answers both, for the log.
     */
    async recoverStaleParts(staleAfterMs: number): Promise<{ requeued: { jobId: number; part: number }[]; failed: number[] }> {
      const cutoff = sql<Date>`now() - make_interval(secs => ${staleAfterMs / 1000})`;
      const stale = await db
        .updateTable('job_parts')
        .set({ status: PART_STATUS.Queued, worker: null, heartbeat_at: null })
        .where('status', '=', PART_STATUS.Running)
        .where('heartbeat_at', '<', cutoff)
        .returning(['job_id', 'part', 'attempts'])
        .execute();
      const failed = [...new Set(stale.filter((p) => p.attempts >= MAX_PART_ATTEMPTS).map((p) => p.job_id))];
      const reason = `A part of it took its worker process down ${MAX_PART_ATTEMPTS} times (out of memory?); it was not retried again. Set the job Pending to train it again`;
      for (const jobId of failed) await failJob(jobId, reason);
      return { requeued: stale.filter((p) => !failed.includes(p.job_id)).map((p) => ({ jobId: p.job_id, part: p.part })), failed };
    },

    discardParts: (jobId: number) => discardParts(db, jobId),
  };
}

export type JobPartsRepository = ReturnType<typeof createJobPartsRepository>;
