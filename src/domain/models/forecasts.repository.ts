import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

export interface ForecastRecordRow {
  id: number;
  job_id: number;
  training_id: number;
  user_id: number;
  header: string[];
  row: Record<string, string>;
  created_at: Date;
}

/** Rows predicted through POST /forecasts.php, kept per job (jsonb keeps no key order, hence `header`). */
export function createForecastsRepository(db: Kysely<Database>) {
  return {
    async insert(record: { job_id: number; training_id: number; user_id: number; header: string[]; row: Record<string, string> }, at: Date): Promise<number> {
      const inserted = await db
        .insertInto('forecast_records')
        .values({ ...record, header: JSON.stringify(record.header), row: JSON.stringify(record.row), created_at: at })
        .returning('id')
        .executeTakeFirstOrThrow();
      return inserted.id;
    },

    /** Newest first. */
    async listForJob(jobId: number): Promise<ForecastRecordRow[]> {
      return db
        .selectFrom('forecast_records')
        .select(['id', 'job_id', 'training_id', 'user_id', 'header', 'row', 'created_at'])
        .where('job_id', '=', jobId)
        .orderBy('id', 'desc')
        .execute();
    },
  };
}

export type ForecastsRepository = ReturnType<typeof createForecastsRepository>;
