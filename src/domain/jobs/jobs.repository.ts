import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { JobsTable, TrainingsTable } from '../../db/tables/jobs.js';
import { escapeLike } from '../../db/escape-like.js';
import type { InstantRange } from '../shared/date-range.js';
import { JOB_STATUS } from './job-status.js';

type TrainingColumns = Selectable<TrainingsTable>;

/** A job as the endpoints show it: its own columns, its owner's name and its training's figures. */
export type JobView = Omit<Selectable<JobsTable>, 'attempts' | 'updated_at'> &
  Pick<TrainingColumns, 'neurons' | 'inputs' | 'outputs' | 'layers_requested' | 'layers_created' | 'success_rate'> & {
    /** The owner's name and lastname; null when the user is gone. */
    user_name: string | null;
    training_description: TrainingColumns['description'];
    training_status: TrainingColumns['status'];
  };

/** `ownerId` undefined means every user's jobs (administrators). */
export interface JobListFilter {
  ownerId: number | undefined;
  jobId?: number;
  statusIn?: number[];
  appName?: string;
  search?: string;
  range: InstantRange;
}

const ACTIVE = [JOB_STATUS.Pending, JOB_STATUS.Running];

export function createJobsRepository(db: Kysely<Database>) {
  const views = (ownerId: number | undefined) => {
    const query = db
      .selectFrom('jobs')
      .innerJoin('trainings', 'trainings.id', 'jobs.training_id')
      .leftJoin('users', 'users.id', 'jobs.user_id')
      .select([
        'jobs.id',
        'jobs.user_id',
        'jobs.training_id',
        'jobs.session_id',
        'jobs.app_name',
        'jobs.status',
        'jobs.advance',
        'jobs.nets',
        'jobs.error',
        'jobs.abort_requested',
        'jobs.worker',
        'jobs.heartbeat_at',
        'jobs.started_at',
        'jobs.finished_at',
        'jobs.selection',
        'jobs.created_at',
        sql<string | null>`case when users.id is null then null else trim(users.name || ' ' || users.lastname) end`.as('user_name'),
        'trainings.description as training_description',
        'trainings.status as training_status',
        'trainings.neurons',
        'trainings.inputs',
        'trainings.outputs',
        'trainings.layers_requested',
        'trainings.layers_created',
        'trainings.success_rate',
      ]);
    return ownerId === undefined ? query : query.where('jobs.user_id', '=', ownerId);
  };

  return {
    async insert(job: { user_id: number; training_id: number; session_id: number; app_name: string }): Promise<number> {
      const row = await db.insertInto('jobs').values(job).returning('id').executeTakeFirstOrThrow();
      return row.id;
    },

    /** A new training and its first job, both or neither. */
    async insertWithTraining(
      training: { user_id: number; app_name: string; description: string },
      job: { session_id: number },
    ): Promise<{ jobId: number; trainingId: number }> {
      return db.transaction().execute(async (trx) => {
        const t = await trx.insertInto('trainings').values(training).returning('id').executeTakeFirstOrThrow();
        const j = await trx
          .insertInto('jobs')
          .values({ user_id: training.user_id, training_id: t.id, session_id: job.session_id, app_name: training.app_name })
          .returning('id')
          .executeTakeFirstOrThrow();
        return { jobId: j.id, trainingId: t.id };
      });
    },

    // An arrow property: other areas pass it around as an ownership lookup.
    findVisible: async (id: number, ownerId: number | undefined): Promise<JobView | undefined> =>
      views(ownerId).where('jobs.id', '=', id).executeTakeFirst(),

    async list(filter: JobListFilter): Promise<JobView[]> {
      let query = views(filter.ownerId).orderBy('jobs.created_at', 'desc').orderBy('jobs.id', 'desc');
      if (filter.jobId !== undefined) query = query.where('jobs.id', '=', filter.jobId);
      if (filter.statusIn !== undefined) query = query.where('jobs.status', 'in', filter.statusIn);
      if (filter.appName !== undefined) query = query.where('jobs.app_name', '=', filter.appName);
      if (filter.range.from) query = query.where('jobs.created_at', '>=', filter.range.from);
      if (filter.range.before) query = query.where('jobs.created_at', '<', filter.range.before);
      if (filter.search) {
        const pattern = `%${escapeLike(filter.search)}%`;
        const asId = /^\d{1,9}$/.test(filter.search.trim()) ? Number(filter.search.trim()) : undefined;
        query = query.where((eb) =>
          eb.or([
            eb('jobs.app_name', 'ilike', pattern),
            eb('trainings.description', 'ilike', pattern),
            eb('users.name', 'ilike', pattern),
            eb('users.lastname', 'ilike', pattern),
            ...(asId === undefined ? [] : [eb('jobs.id', '=', asId), eb('jobs.training_id', '=', asId)]),
          ]),
        );
      }
      return query.execute();
    },

    async idsOfTraining(trainingId: number): Promise<{ id: number; status: number }[]> {
      return db.selectFrom('jobs').select(['id', 'status']).where('training_id', '=', trainingId).orderBy('id').execute();
    },

    /** Re-targets a job that the engine does not hold (status unchanged since it was read). */
    async reassign(id: number, fromStatus: number, change: { training_id: number; app_name: string }): Promise<boolean> {
      const result = await db
        .updateTable('jobs')
        .set({ ...change, updated_at: new Date() })
        .where('id', '=', id)
        .where('status', '=', fromStatus)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /** Deletes a job the engine does not hold; false when it is (or became) Pending or Running. */
    async deleteIdle(id: number): Promise<boolean> {
      const result = await db.deleteFrom('jobs').where('id', '=', id).where('status', 'not in', ACTIVE).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async countRunning(ownerId: number | undefined): Promise<number> {
      let query = db.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', JOB_STATUS.Running);
      if (ownerId !== undefined) query = query.where('user_id', '=', ownerId);
      return (await query.executeTakeFirstOrThrow()).n;
    },

    /** Mean advance (0-100) over every job of an app; 0 when there is none. */
    async averageAdvance(ownerId: number | undefined, appName: string): Promise<number> {
      let query = db
        .selectFrom('jobs')
        .select(sql<number | null>`avg(advance)::double precision`.as('advance'))
        .where('app_name', '=', appName);
      if (ownerId !== undefined) query = query.where('user_id', '=', ownerId);
      return (await query.executeTakeFirstOrThrow()).advance ?? 0;
    },
  };
}

export type JobsRepository = ReturnType<typeof createJobsRepository>;
