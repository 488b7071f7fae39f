import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { TrainingsTable } from '../../db/tables/jobs.js';
import { escapeLike } from '../../db/escape-like.js';
import type { InstantRange } from '../shared/date-range.js';
import { TRAINING_STATUS } from './training-status.js';

const COLUMNS = [
  'id',
  'user_id',
  'app_name',
  'description',
  'status',
  'neurons',
  'inputs',
  'outputs',
  'layers_requested',
  'layers_created',
  'success_rate',
  'created_at',
] as const;

export type TrainingRow = Pick<Selectable<TrainingsTable>, (typeof COLUMNS)[number]>;

/** The model figures a training reaches, as columns (the service's TrainingFigures). */
export type TrainingFigureColumns = Pick<
  Selectable<TrainingsTable>,
  'app_name' | 'neurons' | 'inputs' | 'outputs' | 'layers_requested' | 'layers_created' | 'success_rate'
> & { description?: string };

/** `ownerId` undefined means every user's rows (administrators). */
export interface TrainingListFilter {
  ownerId: number | undefined;
  status?: number;
  appName?: string;
  search?: string;
  range: InstantRange;
  limit?: number;
  sort: 'asc' | 'desc';
}

export function createTrainingsRepository(db: Kysely<Database>) {
  const visible = (ownerId: number | undefined) => {
    const query = db.selectFrom('trainings').select(COLUMNS);
    return ownerId === undefined ? query : query.where('user_id', '=', ownerId);
  };

  return {
    async insert(training: { user_id: number; app_name: string; description: string }): Promise<number> {
      const row = await db.insertInto('trainings').values(training).returning('id').executeTakeFirstOrThrow();
      return row.id;
    },

    // An arrow property: other areas pass it around as an ownership lookup.
    findVisible: async (id: number, ownerId: number | undefined): Promise<TrainingRow | undefined> =>
      visible(ownerId).where('id', '=', id).executeTakeFirst(),

    /** Legacy lookup: the training a job runs, when that job belongs to the app named. */
    async findByJob(jobId: number, appName: string, ownerId: number | undefined): Promise<TrainingRow | undefined> {
      let query = db
        .selectFrom('jobs')
        .innerJoin('trainings', 'trainings.id', 'jobs.training_id')
        .select(COLUMNS.map((c) => `trainings.${c}` as const))
        .where('jobs.id', '=', jobId)
        .where('jobs.app_name', '=', appName);
      if (ownerId !== undefined) query = query.where('jobs.user_id', '=', ownerId);
      return query.executeTakeFirst();
    },

    /** The caller's most recent training for an app: the one a job without `newTraining` continues. */
    async findLatestForApp(userId: number, appName: string): Promise<TrainingRow | undefined> {
      return visible(userId).where('app_name', '=', appName).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
    },

    async list(filter: TrainingListFilter): Promise<TrainingRow[]> {
      let query = visible(filter.ownerId).orderBy('created_at', filter.sort).orderBy('id', filter.sort);
      if (filter.status !== undefined) query = query.where('status', '=', filter.status);
      if (filter.appName !== undefined) query = query.where('app_name', '=', filter.appName);
      if (filter.range.from) query = query.where('created_at', '>=', filter.range.from);
      if (filter.range.before) query = query.where('created_at', '<', filter.range.before);
      if (filter.search) {
        const pattern = `%${escapeLike(filter.search)}%`;
        query = query.where((eb) => eb.or([eb('description', 'ilike', pattern), eb('app_name', 'ilike', pattern)]));
      }
      if (filter.limit !== undefined) query = query.limit(filter.limit);
      return query.execute();
    },

    async updateDescription(id: number, description: string): Promise<void> {
      await db.updateTable('trainings').set({ description, updated_at: new Date() }).where('id', '=', id).execute();
    },

    async updateFigures(id: number, figures: TrainingFigureColumns): Promise<void> {
      await db.updateTable('trainings').set({ ...figures, updated_at: new Date() }).where('id', '=', id).execute();
    },

    async updateStatus(id: number, status: number): Promise<void> {
      await db.updateTable('trainings').set({ status, updated_at: new Date() }).where('id', '=', id).execute();
    },

    /** Knowledges of GET /summaries: trainings that reached Trained. */
    async countTrained(ownerId: number | undefined): Promise<number> {
      let query = db.selectFrom('trainings').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', TRAINING_STATUS.Trained);
      if (ownerId !== undefined) query = query.where('user_id', '=', ownerId);
      const row = await query.executeTakeFirstOrThrow();
      return row.n;
    },
  };
}

export type TrainingsRepository = ReturnType<typeof createTrainingsRepository>;
