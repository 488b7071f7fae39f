import { sql, type Expression, type Kysely, type Selectable, type SqlBool } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ChatSentencesTable, SentencesTable, UsecaseSentencesTable } from '../../db/tables/chat.js';
import type { ColumnWhitelist } from '../shared/filter/index.js';

export type SentenceRow = Selectable<SentencesTable>;

type SaidSentenceColumns = Selectable<ChatSentencesTable>;

/** A sentence as said in a chat: its role, rating, speaker and tool turns, and the chat's own tokens and time. */
export type ChatSentenceRow = SentenceRow &
  Pick<SaidSentenceColumns, 'role' | 'rate' | 'user_id' | 'tool_calls'> & {
    chat_tokens: SaidSentenceColumns['tokens'];
    said_at: SaidSentenceColumns['created_at'];
    /** `tool_calls` as the database writes it out: the text a `Tools LIKE` pattern is matched against. */
    tool_calls_text: string | null;
  };

export type UsecaseSentenceRow = SentenceRow & Pick<Selectable<UsecaseSentencesTable>, 'position'>;

const COLUMNS = ['sentences.id', 'sentences.client_id', 'sentences.text', 'sentences.tokens', 'sentences.created_at', 'sentences.updated_at'] as const;

/** Wire names of a Sentence usable in `fields` and `where`; in a use case or a chat they gain its columns. */
export const SENTENCE_COLUMNS: ColumnWhitelist = {
  Id: { column: 'sentences.id', type: 'int' },
  Text: { column: 'sentences.text', type: 'text' },
  Tokens: { column: 'sentences.tokens', type: 'int' },
  clie_Id: { column: 'sentences.client_id', type: 'int' },
  DateTime: { column: 'sentences.created_at', type: 'timestamp' },
};
export const USECASE_SENTENCE_COLUMNS: ColumnWhitelist = {
  ...SENTENCE_COLUMNS,
  Order: { column: 'usecase_sentences.position', type: 'int' },
};
export const CHAT_SENTENCE_COLUMNS: ColumnWhitelist = {
  ...SENTENCE_COLUMNS,
  DateTime: { column: 'chat_sentences.created_at', type: 'timestamp' },
  Role: { column: 'chat_sentences.role', type: 'int' },
  Rate: { column: 'chat_sentences.rate', type: 'int' },
  User_Id: { column: 'chat_sentences.user_id', type: 'int' },
  Tools: { column: 'chat_sentences.tool_calls', type: 'json' },
};

export function createSentencesRepository(db: Kysely<Database>) {
  return {
    async insert(values: { client_id: number; text: string; tokens: number }, now: Date): Promise<number> {
      const row = await db.insertInto('sentences').values({ ...values, created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow();
      return row.id;
    },

    async findById(id: number): Promise<SentenceRow | undefined> {
      return db.selectFrom('sentences').select(COLUMNS).where('sentences.id', '=', id).executeTakeFirst();
    },

    async findMany(ids: number[]): Promise<SentenceRow[]> {
      if (ids.length === 0) return [];
      return db.selectFrom('sentences').select(COLUMNS).where('sentences.id', 'in', ids).execute();
    },

    async updateText(id: number, text: string, tokens: number, now: Date): Promise<void> {
      await db.updateTable('sentences').set({ text, tokens, updated_at: now }).where('id', '=', id).execute();
    },

    async list(scope: { onlyClientId?: number | null; where?: Expression<SqlBool> }): Promise<SentenceRow[]> {
      if (scope.onlyClientId === null) return [];
      let query = db.selectFrom('sentences').select(COLUMNS).orderBy('sentences.id');
      if (scope.onlyClientId !== undefined) query = query.where('sentences.client_id', '=', scope.onlyClientId);
      if (scope.where) query = query.where(scope.where);
      return query.execute();
    },

    /** A chat's sentences in the order they were said. */
    async listForChat(chatId: number, where?: Expression<SqlBool>): Promise<ChatSentenceRow[]> {
      let query = db
        .selectFrom('chat_sentences')
        .innerJoin('sentences', 'sentences.id', 'chat_sentences.sentence_id')
        .select([
          ...COLUMNS,
          'chat_sentences.role',
          'chat_sentences.rate',
          'chat_sentences.user_id',
          'chat_sentences.tokens as chat_tokens',
          'chat_sentences.created_at as said_at',
          'chat_sentences.tool_calls',
          sql<string | null>`chat_sentences.tool_calls::text`.as('tool_calls_text'),
        ])
        .where('chat_sentences.chat_id', '=', chatId)
        .orderBy('chat_sentences.id');
      if (where) query = query.where(where);
      return query.execute();
    },

    /** A use case's sentences in prompt order. */
    async listForUsecase(usecaseId: number, where?: Expression<SqlBool>): Promise<UsecaseSentenceRow[]> {
      let query = db
        .selectFrom('usecase_sentences')
        .innerJoin('sentences', 'sentences.id', 'usecase_sentences.sentence_id')
        .select([...COLUMNS, 'usecase_sentences.position'])
        .where('usecase_sentences.usecase_id', '=', usecaseId)
        .orderBy('usecase_sentences.position');
      if (where) query = query.where(where);
      return query.execute();
    },
  };
}

export type SentencesRepository = ReturnType<typeof createSentencesRepository>;
