import { type Expression, type Kysely, type Selectable, sql, type SqlBool } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { AppRecordsTable } from '../../db/tables/models.js';
import type { ColumnWhitelist } from '../shared/filter/index.js';

export type AppRecordRow = Selectable<AppRecordsTable>;

/** The parameter columns a client may set when creating a record (POST /app simple=1). */
export interface AppParameters {
  job_id?: number | null;
  training_id?: number | null;
  layers_requested?: number;
  learning_rate?: number;
  request_type?: number;
  data_rows_to_consider?: number;
  no_negatives?: number;
  increase_margin?: number;
  decrease_margin?: number;
  deviation_target?: number;
  deviated_target?: number;
  model_family?: string;
}

export interface RunReport {
  status: number;
  host: string;
  pid: number;
  request_type: number;
  training_id?: number;
}

export interface TrainingFigures {
  neurons: number;
  inputs: number;
  outputs: number;
  layers_requested: number;
  layers_created: number;
}

/** Wire names of an App record (`fields`, `filters`) mapped to their columns. */
export const APP_RECORD_COLUMNS: ColumnWhitelist = {
  Id: { column: 'app_records.id', type: 'int' },
  App_Name: { column: 'app_records.app_name', type: 'text' },
  Job_Id: { column: 'app_records.job_id', type: 'int' },
  Training_Id: { column: 'app_records.training_id', type: 'int' },
  LayersRequested: { column: 'app_records.layers_requested', type: 'int' },
  LearningRate: { column: 'app_records.learning_rate', type: 'number' },
  RequestType: { column: 'app_records.request_type', type: 'int' },
  DataRowsToConsider: { column: 'app_records.data_rows_to_consider', type: 'int' },
  NoNegatives: { column: 'app_records.no_negatives', type: 'int' },
  IncreaseMargin: { column: 'app_records.increase_margin', type: 'number' },
  DecreaseMargin: { column: 'app_records.decrease_margin', type: 'number' },
  DeviationTarget: { column: 'app_records.deviation_target', type: 'number' },
  DeviatedTarget: { column: 'app_records.deviated_target', type: 'number' },
  ModelFamily: { column: 'app_records.model_family', type: 'text' },
  Status: { column: 'app_records.status', type: 'int' },
  Host: { column: 'app_records.host', type: 'text' },
  Pid: { column: 'app_records.pid', type: 'int' },
  Probability: { column: 'app_records.probability', type: 'number' },
  User_Id: { column: 'app_records.user_id', type: 'int' },
  DateTime: { column: 'app_records.created_at', type: 'timestamp' },
  LastUpdDateTime: { column: 'app_records.updated_at', type: 'timestamp' },
};

export interface AppRecordListFilter {
  /** undefined: every user's records (administrators). */
  ownerId: number | undefined;
  appName: string;
  id?: number;
  jobId?: number;
  /** Only app-level templates (no job). */
  templatesOnly?: boolean;
  condition?: Expression<SqlBool>;
}

const COLUMNS = [
  'id',
  'user_id',
  'app_name',
  'job_id',
  'training_id',
  'layers_requested',
  'learning_rate',
  'request_type',
  'data_rows_to_consider',
  'no_negatives',
  'increase_margin',
  'decrease_margin',
  'deviation_target',
  'deviated_target',
  'model_family',
  'status',
  'host',
  'pid',
  'probability',
  'created_at',
  'updated_at',
] as const;

/** Keeps a result list bounded whatever the filter. */
export const MAX_APP_RECORDS = 1000;

export function createAppRecordsRepository(db: Kysely<Database>) {
  const visible = (ownerId: number | undefined) => {
    const query = db.selectFrom('app_records').select(COLUMNS.map((c) => `app_records.${c}` as const));
    return ownerId === undefined ? query : query.where('app_records.user_id', '=', ownerId);
  };

  return {
    async insert(record: { user_id: number; app_name: string } & AppParameters, at: Date): Promise<number> {
      const row = await db
        .insertInto('app_records')
        .values({ ...record, created_at: at, updated_at: at })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },

    /** Newest first. */
    async list(filter: AppRecordListFilter): Promise<AppRecordRow[]> {
      let query = visible(filter.ownerId)
        .where('app_records.app_name', '=', filter.appName)
        .orderBy('app_records.id', 'desc')
        .limit(MAX_APP_RECORDS);
      if (filter.id !== undefined) query = query.where('app_records.id', '=', filter.id);
      if (filter.jobId !== undefined) query = query.where('app_records.job_id', '=', filter.jobId);
      if (filter.templatesOnly) query = query.where('app_records.job_id', 'is', null);
      if (filter.condition) query = query.where(filter.condition);
      return query.execute();
    },

    async findVisible(id: number, ownerId: number | undefined): Promise<AppRecordRow | undefined> {
      return visible(ownerId).where('app_records.id', '=', id).executeTakeFirst();
    },

    /** The newest record of a job (the one that applies to it). */
    async findLatestForJob(jobId: number): Promise<AppRecordRow | undefined> {
      return visible(undefined).where('app_records.job_id', '=', jobId).orderBy('app_records.id', 'desc').limit(1).executeTakeFirst();
    },

    /**
     * The record whose parameters a job runs with: the job's own newest record, else the owner's newest
     * template of the job's app for that training, else the owner's newest template of the app.
     */
    async findApplicable(job: { id: number; user_id: number; app_name: string; training_id: number }): Promise<AppRecordRow | undefined> {
      return visible(undefined)
        .where((eb) =>
          eb.or([
            eb('app_records.job_id', '=', job.id),
            eb.and([
              eb('app_records.job_id', 'is', null),
              eb('app_records.user_id', '=', job.user_id),
              eb('app_records.app_name', '=', job.app_name),
              eb.or([eb('app_records.training_id', 'is', null), eb('app_records.training_id', '=', job.training_id)]),
            ]),
          ]),
        )
        .orderBy(
          sql<number>`case when app_records.job_id is not null then 0 when app_records.training_id is not null then 1 else 2 end`,
        )
        .orderBy('app_records.id', 'desc')
        .limit(1)
        .executeTakeFirst();
    },

    async report(id: number, report: RunReport, at: Date): Promise<void> {
      await db
        .updateTable('app_records')
        .set({ ...report, updated_at: at })
        .where('id', '=', id)
        .execute();
    },

    async setProbability(id: number, probability: number, at: Date): Promise<void> {
      await db.updateTable('app_records').set({ probability, updated_at: at }).where('id', '=', id).execute();
    },

    /** The network figures a trainer reports (PUT /app request_type 1) belong to the training. */
    async setTrainingFigures(trainingId: number, figures: TrainingFigures, at: Date): Promise<void> {
      await db
        .updateTable('trainings')
        .set({ ...figures, updated_at: at })
        .where('id', '=', trainingId)
        .execute();
    },
  };
}

export type AppRecordsRepository = ReturnType<typeof createAppRecordsRepository>;
