import type { Expression, Insertable, Kysely, Selectable, SqlBool } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { LogsTable } from '../../db/tables/logs.js';
import { escapeLike } from '../../db/escape-like.js';
import type { ColumnWhitelist } from '../shared/filter/index.js';

export type LogRow = Selectable<LogsTable>;

export type NewLogEntry = Required<Omit<Insertable<LogsTable>, 'id' | 'created_at'>>;

/** Wire names of a Log entry usable in `filters`, mapped to their columns. */
export const LOG_COLUMNS: ColumnWhitelist = {
  id: { column: 'id', type: 'int' },
  host: { column: 'host', type: 'text' },
  pid: { column: 'pid', type: 'int' },
  procedure: { column: 'procedure', type: 'text' },
  type: { column: 'type', type: 'int' },
  date: { column: 'created_at', type: 'timestamp' },
  text: { column: 'text', type: 'text' },
};

export interface LogListFilter {
  host?: string;
  /** Prefix: `sessions` matches `sessions.login`. */
  procedure?: string;
  from?: Date;
  /** Exclusive end. */
  before?: Date;
  pid?: number;
  type?: number;
  /** Partial, case-insensitive match on the text or the request id. */
  search?: string;
  condition?: Expression<SqlBool>;
  limit: number;
}

const COLUMNS = ['id', 'host', 'pid', 'procedure', 'type', 'text', 'user_id', 'request_id', 'created_at'] as const;

export function createLogsRepository(db: Kysely<Database>) {
  return {
    async insert(entry: NewLogEntry, at?: Date): Promise<number> {
      const row = await db
        .insertInto('logs')
        .values(at ? { ...entry, created_at: at } : entry)
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },

    /** Newest first. */
    async list(filter: LogListFilter): Promise<LogRow[]> {
      let query = db.selectFrom('logs').select(COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit);
      if (filter.host) query = query.where('host', '=', filter.host);
      if (filter.procedure) query = query.where('procedure', 'like', `${escapeLike(filter.procedure)}%`);
      if (filter.from) query = query.where('created_at', '>=', filter.from);
      if (filter.before) query = query.where('created_at', '<', filter.before);
      if (filter.pid !== undefined) query = query.where('pid', '=', filter.pid);
      if (filter.type !== undefined) query = query.where('type', '=', filter.type);
      if (filter.search) {
        const pattern = `%${escapeLike(filter.search)}%`;
        query = query.where((eb) => eb.or([eb('text', 'ilike', pattern), eb('request_id', 'ilike', pattern)]));
      }
      if (filter.condition) query = query.where(filter.condition);
      return query.execute();
    },
  };
}

export type LogsRepository = ReturnType<typeof createLogsRepository>;
