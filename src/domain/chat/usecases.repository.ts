import { sql, type Expression, type Kysely, type Selectable, type SqlBool, type Transaction, type Updateable } from 'kysely';
import { randomBytes } from 'node:crypto';
import type { Database } from '../../db/schema.js';
import type { UsecaseSentencesTable, UsecasesTable } from '../../db/tables/chat.js';
import type { ColumnWhitelist } from '../shared/filter/index.js';

const COLUMNS = [
  'usecases.id',
  'usecases.client_id',
  'usecases.user_id',
  'usecases.description',
  'usecases.welcome',
  'usecases.start_at',
  'usecases.finish_at',
  'usecases.tokens',
  'usecases.words_for_manual',
  'usecases.words_for_attention',
  'usecases.timeout_for_auto_msg',
  'usecases.auto_msg',
  'usecases.manual_message',
  'usecases.temperature',
  'usecases.is_active',
  'usecases.token_budget',
  'usecases.model_tools',
  'usecases.hash',
  'usecases.created_at',
  'usecases.updated_at',
] as const;

/** Wire names of a Use case usable in `fields` and `where`, mapped to their columns. */
export const USECASE_COLUMNS: ColumnWhitelist = {
  Id: { column: 'usecases.id', type: 'int' },
  clie_Id: { column: 'usecases.client_id', type: 'int' },
  User_Id: { column: 'usecases.user_id', type: 'int' },
  Description: { column: 'usecases.description', type: 'text' },
  Welcome: { column: 'usecases.welcome', type: 'text' },
  StartDateTime: { column: 'usecases.start_at', type: 'timestamp' },
  FinishDateTime: { column: 'usecases.finish_at', type: 'timestamp' },
  Tokens: { column: 'usecases.tokens', type: 'int' },
  WordsForManual: { column: 'usecases.words_for_manual', type: 'text' },
  WordsForAttention: { column: 'usecases.words_for_attention', type: 'text' },
  TimeOutForAutoMsg: { column: 'usecases.timeout_for_auto_msg', type: 'int' },
  AutoMsg: { column: 'usecases.auto_msg', type: 'text' },
  ManualMessage: { column: 'usecases.manual_message', type: 'text' },
  LastUpdDateTime: { column: 'usecases.updated_at', type: 'timestamp' },
  Hash: { column: 'usecases.hash', type: 'text' },
  Temperature: { column: 'usecases.temperature', type: 'number' },
  Active: { column: 'usecases.is_active', type: 'bool' },
  TokenBudget: { column: 'usecases.token_budget', type: 'int' },
  ModelTools: { column: 'usecases.model_tools', type: 'bool' },
};

export type UsecaseRow = Selectable<UsecasesTable>;

/** The scenario columns a client sets (through the service's UsecaseFields). */
export type UsecaseColumns = Pick<
  Updateable<UsecasesTable>,
  | 'description'
  | 'welcome'
  | 'start_at'
  | 'finish_at'
  | 'words_for_manual'
  | 'words_for_attention'
  | 'timeout_for_auto_msg'
  | 'auto_msg'
  | 'manual_message'
  | 'temperature'
  | 'token_budget'
  | 'model_tools'
>;

export interface UsecaseListScope {
  /** undefined: every client (administrators); null: none. */
  onlyClientId?: number | null;
  clientId?: number;
  changedSince?: Date;
  where?: Expression<SqlBool>;
}

export type UsecaseSentenceLink = Pick<Selectable<UsecaseSentencesTable>, 'sentence_id' | 'position'>;

/** A fresh `Hash`: it changes on every update so a front end polling with upd_date sees the change. */
export const newUsecaseHash = () => randomBytes(16).toString('hex');

/** Marks a use case changed (LastUpdDateTime and Hash), optionally moving its token count. */
async function touch(trx: Kysely<Database> | Transaction<Database>, id: number, now: Date, tokenDelta = 0): Promise<void> {
  await trx
    .updateTable('usecases')
    .set((eb) => ({
      updated_at: now,
      hash: newUsecaseHash(),
      ...(tokenDelta === 0 ? {} : { tokens: sql<number>`greatest(0, ${eb.ref('tokens')} + ${tokenDelta})` }),
    }))
    .where('id', '=', id)
    .execute();
}

/** Positions stay 1..n without gaps after a removal. */
async function renumber(trx: Transaction<Database>, usecaseId: number): Promise<void> {
  await sql`
    update usecase_sentences as us set position = r.rn
    from (select sentence_id, row_number() over (order by position, sentence_id) as rn
          from usecase_sentences where usecase_id = ${usecaseId}) as r
    where us.usecase_id = ${usecaseId} and us.sentence_id = r.sentence_id and us.position <> r.rn`.execute(trx);
}

async function link(trx: Transaction<Database>, usecaseId: number, sentenceIds: number[], position: number | undefined, now: Date, tokenDelta: number): Promise<number> {
  // Serialises concurrent reorders of one use case.
  await trx.selectFrom('usecases').select('id').where('id', '=', usecaseId).forUpdate().execute();
  const existing = await trx.selectFrom('usecase_sentences').select(['sentence_id', 'position']).where('usecase_id', '=', usecaseId).execute();
  const linked = new Set(existing.map((l) => l.sentence_id));
  const fresh = [...new Set(sentenceIds)].filter((id) => !linked.has(id));
  if (fresh.length === 0) return 0;
  const end = existing.length + 1;
  const at = position === undefined || position > end ? end : Math.max(1, position);
  if (at < end) {
    await trx
      .updateTable('usecase_sentences')
      .set((eb) => ({ position: eb('position', '+', fresh.length) }))
      .where('usecase_id', '=', usecaseId)
      .where('position', '>=', at)
      .execute();
  }
  await trx
    .insertInto('usecase_sentences')
    .values(fresh.map((sentence_id, i) => ({ usecase_id: usecaseId, sentence_id, position: at + i })))
    .execute();
  await touch(trx, usecaseId, now, tokenDelta);
  return fresh.length;
}

export function createUsecasesRepository(db: Kysely<Database>) {
  return {
    async insert(values: UsecaseColumns & { client_id: number; user_id: number }, now: Date): Promise<number> {
      const row = await db
        .insertInto('usecases')
        .values({ ...values, start_at: values.start_at ?? now, hash: newUsecaseHash(), created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    },

    async findById(id: number): Promise<UsecaseRow | undefined> {
      return db.selectFrom('usecases').select(COLUMNS).where('usecases.id', '=', id).executeTakeFirst();
    },

    async findMany(ids: number[]): Promise<UsecaseRow[]> {
      if (ids.length === 0) return [];
      return db.selectFrom('usecases').select(COLUMNS).where('usecases.id', 'in', ids).execute();
    },

    async list(scope: UsecaseListScope): Promise<UsecaseRow[]> {
      if (scope.onlyClientId === null) return [];
      let query = db.selectFrom('usecases').select(COLUMNS).orderBy('usecases.id');
      if (scope.onlyClientId !== undefined) query = query.where('usecases.client_id', '=', scope.onlyClientId);
      if (scope.clientId !== undefined) query = query.where('usecases.client_id', '=', scope.clientId);
      if (scope.changedSince) query = query.where('usecases.updated_at', '>=', scope.changedSince);
      if (scope.where) query = query.where(scope.where);
      return query.execute();
    },

    async update(id: number, patch: UsecaseColumns & { is_active?: boolean }, now: Date): Promise<void> {
      await db.updateTable('usecases').set({ ...patch, updated_at: now, hash: newUsecaseHash() }).where('id', '=', id).execute();
    },

    async links(usecaseId: number): Promise<UsecaseSentenceLink[]> {
      return db
        .selectFrom('usecase_sentences')
        .select(['sentence_id', 'position'])
        .where('usecase_id', '=', usecaseId)
        .orderBy('position')
        .execute();
    },

    /**
     * Links sentences at `position` (1-based; the end when absent or past it), shifting later ones down.
     * Sentences already linked keep their place. Answers how many links were made.
     */
    async linkSentences(usecaseId: number, sentenceIds: number[], position: number | undefined, now: Date): Promise<number> {
      return db.transaction().execute((trx) => link(trx, usecaseId, sentenceIds, position, now, 0));
    },

    /** A new sentence appended to a use case in one step; `addTokens` adds its tokens to the use case's count. */
    async insertLinkedSentence(usecaseId: number, sentence: { client_id: number; text: string; tokens: number }, addTokens: boolean, now: Date): Promise<number> {
      return db.transaction().execute(async (trx) => {
        const { id } = await trx
          .insertInto('sentences')
          .values({ ...sentence, created_at: now, updated_at: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        await link(trx, usecaseId, [id], undefined, now, addTokens ? sentence.tokens : 0);
        return id;
      });
    },

    /** Removes links; with `subtractTokens` the removed sentences' tokens leave the use case's count. */
    async unlinkSentences(usecaseId: number, sentenceIds: number[], subtractTokens: boolean, now: Date): Promise<number> {
      return db.transaction().execute(async (trx) => {
        await trx.selectFrom('usecases').select('id').where('id', '=', usecaseId).forUpdate().execute();
        const removed = await trx
          .deleteFrom('usecase_sentences')
          .where('usecase_id', '=', usecaseId)
          .where('sentence_id', 'in', sentenceIds)
          .returning('sentence_id')
          .execute();
        if (removed.length === 0) return 0;
        let delta = 0;
        if (subtractTokens) {
          const sum = await trx
            .selectFrom('sentences')
            .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('tokens'), eb.lit(0)).as('n'))
            .where('id', 'in', removed.map((r) => r.sentence_id))
            .executeTakeFirstOrThrow();
          delta = -Number(sum.n);
        }
        await renumber(trx, usecaseId);
        await touch(trx, usecaseId, now, delta);
        return removed.length;
      });
    },

    /** Swaps the sentence at `position` with its neighbour; false when there is no neighbour that way. */
    async moveSentence(usecaseId: number, position: number, direction: 'Up' | 'Down', now: Date): Promise<'moved' | 'no_sentence' | 'at_edge'> {
      return db.transaction().execute(async (trx) => {
        await trx.selectFrom('usecases').select('id').where('id', '=', usecaseId).forUpdate().execute();
        const target = direction === 'Up' ? position - 1 : position + 1;
        const rows = await trx
          .selectFrom('usecase_sentences')
          .select(['sentence_id', 'position'])
          .where('usecase_id', '=', usecaseId)
          .where('position', 'in', [position, target])
          .execute();
        const moving = rows.find((r) => r.position === position);
        const other = rows.find((r) => r.position === target);
        if (!moving) return 'no_sentence';
        if (!other) return 'at_edge';
        await trx.updateTable('usecase_sentences').set({ position: target }).where('usecase_id', '=', usecaseId).where('sentence_id', '=', moving.sentence_id).execute();
        await trx.updateTable('usecase_sentences').set({ position }).where('usecase_id', '=', usecaseId).where('sentence_id', '=', other.sentence_id).execute();
        await touch(trx, usecaseId, now);
        return 'moved';
      });
    },

    /** Marks use cases changed (a linked sentence's text changed, tokens were added). */
    async touch(ids: number[], now: Date, tokenDelta = 0): Promise<void> {
      for (const id of ids) await touch(db, id, now, tokenDelta);
    },

    async usecasesUsingSentence(sentenceId: number): Promise<number[]> {
      const rows = await db.selectFrom('usecase_sentences').select('usecase_id').where('sentence_id', '=', sentenceId).execute();
      return rows.map((r) => r.usecase_id);
    },
  };
}

export type UsecasesRepository = ReturnType<typeof createUsecasesRepository>;
