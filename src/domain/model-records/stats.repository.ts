import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { StatRecordsTable } from '../../db/tables/models.js';

import { STAT_STATUS, type ClosedStatStatus } from './stat-status.js';

export type StatRecordRow = Selectable<StatRecordsTable>;

export type NewStatRecord = Required<Pick<Insertable<StatRecordsTable>, 'user_id' | 'job_id' | 'name' | 'host' | 'pid' | 'parameters' | 'caller' | 'text'>>;

export interface StatChange {
  procedure?: string;
  text?: string;
  advance?: number;
}

/** A trainer process as the wire names it. */
export interface StatProcess {
  name: string;
  host: string;
  pid: number;
}

const COLUMNS = [
  'id',
  'user_id',
  'job_id',
  'name',
  'host',
  'pid',
  'parameters',
  'caller',
  'text',
  'procedure',
  'advance',
  'status',
  'created_at',
  'updated_at',
  'terminated_at',
] as const;

/** Keeps a result list bounded. */
export const MAX_STAT_RECORDS = 1000;

export function createStatsRepository(db: Kysely<Database>) {
  const visible = (ownerId: number | undefined) => {
    const query = db.selectFrom('stat_records').select(COLUMNS);
    return ownerId === undefined ? query : query.where('user_id', '=', ownerId);
  };
  const ofProcess = (process: StatProcess, ownerId: number | undefined) =>
    visible(ownerId).where('name', '=', process.name).where('host', '=', process.host).where('pid', '=', process.pid);

  return {
    async insert(record: NewStatRecord, at: Date): Promise<number> {
      const row = await db
        .insertInto('stat_records')
        .values({ ...record, created_at: at, updated_at: at })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },

    /** Newest first. */
    async listForJob(jobId: number, ownerId: number | undefined): Promise<StatRecordRow[]> {
      return visible(ownerId).where('job_id', '=', jobId).orderBy('id', 'desc').limit(MAX_STAT_RECORDS).execute();
    },

    async countForJob(jobId: number, ownerId: number | undefined): Promise<number> {
      let query = db.selectFrom('stat_records').select((eb) => eb.fn.countAll<number>().as('n')).where('job_id', '=', jobId);
      if (ownerId !== undefined) query = query.where('user_id', '=', ownerId);
      return (await query.executeTakeFirstOrThrow()).n;
    },

    /** Newest first. */
    async listForProcess(process: StatProcess, statusIn: number[], ownerId: number | undefined): Promise<StatRecordRow[]> {
      return ofProcess(process, ownerId).where('status', 'in', statusIn).orderBy('id', 'desc').limit(MAX_STAT_RECORDS).execute();
    },

    /** The newest open record of a process: the one a PATCH by name, host and pid addresses. */
    async findOpen(process: StatProcess, ownerId: number | undefined, jobId?: number): Promise<StatRecordRow | undefined> {
      let query = ofProcess(process, ownerId).where('status', '=', STAT_STATUS.Open);
      if (jobId !== undefined) query = query.where('job_id', '=', jobId);
      return query.orderBy('id', 'desc').limit(1).executeTakeFirst();
    },

    async findById(id: number): Promise<StatRecordRow | undefined> {
      return visible(undefined).where('id', '=', id).executeTakeFirst();
    },

    /** False when the record is not open (terminated records are final). */
    async update(id: number, change: StatChange, at: Date): Promise<boolean> {
      const result = await db
        .updateTable('stat_records')
        .set({ ...change, updated_at: at })
        .where('id', '=', id)
        .where('status', '=', STAT_STATUS.Open)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async terminate(id: number, status: ClosedStatStatus, change: StatChange, at: Date, executor: Kysely<Database> = db): Promise<boolean> {
      const result = await executor
        .updateTable('stat_records')
        .set({ ...change, status, updated_at: at, terminated_at: at })
        .where('id', '=', id)
        .where('status', '=', STAT_STATUS.Open)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}

export type StatsRepository = ReturnType<typeof createStatsRepository>;
