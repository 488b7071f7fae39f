import { sql, type Expression, type Kysely, type Selectable, type SqlBool } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ConsumptionKind, ConsumptionsTable } from '../../db/tables/logs.js';
import { escapeLike } from '../../db/escape-like.js';
import type { ColumnWhitelist } from '../shared/filter/index.js';

/** A consumption record as listed: the table's columns plus the owner's name (joined). */
export type ConsumptionRow = Selectable<ConsumptionsTable> & { user_name: string };

/** The language-model part of a record (chat and aichat kinds). */
export interface TokenUse {
  kind: Exclude<ConsumptionKind, 'training'>;
  client_id: number | null;
  usecase_id: number | null;
  chat_id: number | null;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
}

export interface NewConsumption extends Partial<TokenUse> {
  user_id: number;
  job_id: number | null;
  training_id: number | null;
  app_name: string;
  host: string;
  pid: number;
  ram: number;
  cpu: number;
  disk: number;
  date: Date;
}

/** Wire names of a Consumption usable in `filters`, mapped to their columns. */
export const CONSUMPTION_COLUMNS: ColumnWhitelist = {
  id: { column: 'c.id', type: 'int' },
  user_id: { column: 'c.user_id', type: 'int' },
  job_id: { column: 'c.job_id', type: 'int' },
  training_id: { column: 'c.training_id', type: 'int' },
  app_name: { column: 'c.app_name', type: 'text' },
  host: { column: 'c.host', type: 'text' },
  pid: { column: 'c.pid', type: 'int' },
  ram: { column: 'c.ram', type: 'number' },
  cpu: { column: 'c.cpu', type: 'number' },
  disk: { column: 'c.disk', type: 'number' },
  date: { column: 'c.date', type: 'timestamp' },
  date_invoiced: { column: 'c.date_invoiced', type: 'timestamp' },
  kind: { column: 'c.kind', type: 'text' },
  client_id: { column: 'c.client_id', type: 'int' },
  usecase_id: { column: 'c.usecase_id', type: 'int' },
  chat_id: { column: 'c.chat_id', type: 'int' },
  model: { column: 'c.model', type: 'text' },
  prompt_tokens: { column: 'c.prompt_tokens', type: 'int' },
  completion_tokens: { column: 'c.completion_tokens', type: 'int' },
};

export interface ConsumptionListFilter {
  onlyUserId?: number;
  /** Partial match on application, host, and the user's name or e-mail. */
  search?: string;
  invoiced?: boolean;
  from?: Date;
  /** Exclusive end. */
  before?: Date;
  app?: string;
  kind?: ConsumptionKind;
  condition?: Expression<SqlBool>;
}

export function createConsumptionsRepository(db: Kysely<Database>) {
  return {
    /** `executor`: a transaction of the caller's, so a reply and its ledger row are written together. */
    async insert(record: NewConsumption, executor: Kysely<Database> = db): Promise<number> {
      const row = await executor.insertInto('consumptions').values(record).returning('id').executeTakeFirstOrThrow();
      return row.id;
    },

    /** Oldest first, as an invoice reads. */
    async list(filter: ConsumptionListFilter): Promise<ConsumptionRow[]> {
      let query = db
        .selectFrom('consumptions as c')
        .innerJoin('users as u', 'u.id', 'c.user_id')
        .select([
          'c.id',
          'c.user_id',
          sql<string>`trim(u.name || ' ' || u.lastname)`.as('user_name'),
          'c.job_id',
          'c.training_id',
          'c.app_name',
          'c.host',
          'c.pid',
          'c.ram',
          'c.cpu',
          'c.disk',
          'c.date',
          'c.date_invoiced',
          'c.kind',
          'c.client_id',
          'c.usecase_id',
          'c.chat_id',
          'c.model',
          'c.prompt_tokens',
          'c.completion_tokens',
        ])
        .orderBy('c.date')
        .orderBy('c.id');
      // The caller's scope is its own condition, ANDed outside anything the request asked for.
      if (filter.onlyUserId !== undefined) query = query.where('c.user_id', '=', filter.onlyUserId);
      if (filter.invoiced === true) query = query.where('c.date_invoiced', 'is not', null);
      if (filter.invoiced === false) query = query.where('c.date_invoiced', 'is', null);
      if (filter.from) query = query.where('c.date', '>=', filter.from);
      if (filter.before) query = query.where('c.date', '<', filter.before);
      if (filter.app) query = query.where('c.app_name', '=', filter.app);
      if (filter.kind) query = query.where('c.kind', '=', filter.kind);
      if (filter.search) {
        const pattern = `%${escapeLike(filter.search)}%`;
        query = query.where((eb) =>
          eb.or([
            eb('c.app_name', 'ilike', pattern),
            eb('c.host', 'ilike', pattern),
            eb('u.name', 'ilike', pattern),
            eb('u.lastname', 'ilike', pattern),
            eb('u.email', 'ilike', pattern),
          ]),
        );
      }
      if (filter.condition) query = query.where(filter.condition);
      return query.execute();
    },

    /** Marks every not yet invoiced record dated before `before`; answers how many. */
    async markInvoicedBefore(before: Date, now: Date): Promise<number> {
      const result = await db
        .updateTable('consumptions')
        .set({ date_invoiced: now })
        .where('date', '<', before)
        .where('date_invoiced', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async markInvoicedIds(ids: readonly number[], now: Date): Promise<number> {
      if (ids.length === 0) return 0;
      const result = await db
        .updateTable('consumptions')
        .set({ date_invoiced: now })
        .where('id', 'in', ids)
        .where('date_invoiced', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

export type ConsumptionsRepository = ReturnType<typeof createConsumptionsRepository>;
