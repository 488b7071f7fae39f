import { sql, type Expression, type Kysely, type Selectable, type SqlBool } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ChatsTable, ControlType, HandoffEvent, HandoffReason, SentenceRole, ToolTurn, UsecasesTable } from '../../db/tables/chat.js';
import { Errors } from '../errors.js';
import type { ColumnWhitelist } from '../shared/filter/index.js';
import { newUsecaseHash } from './usecases.repository.js';

const COLUMNS = [
  'chats.id',
  'chats.usecase_id',
  'chats.user_id',
  'chats.start_at',
  'chats.finish_at',
  'chats.status',
  'chats.control_type',
  'chats.user_managing_id',
  'chats.tokens',
  'chats.hash',
  'chats.is_active',
  'chats.needs_attention',
  'chats.auto_msg_due_at',
  'chats.auto_msg_sent_at',
  'chats.handoff_reason',
  'chats.updated_at',
  'usecases.client_id',
] as const;

/** Wire names of a Chat usable in `fields` and `where`, mapped to their columns. */
export const CHAT_COLUMNS: ColumnWhitelist = {
  Id: { column: 'chats.id', type: 'int' },
  usca_Id: { column: 'chats.usecase_id', type: 'int' },
  User_Id: { column: 'chats.user_id', type: 'int' },
  StartDateTime: { column: 'chats.start_at', type: 'timestamp' },
  FinishDateTime: { column: 'chats.finish_at', type: 'timestamp' },
  Status: { column: 'chats.status', type: 'text' },
  ControlType: { column: 'chats.control_type', type: 'text' },
  UserManaging_Id: { column: 'chats.user_managing_id', type: 'int' },
  Tokens: { column: 'chats.tokens', type: 'int' },
  Hash: { column: 'chats.hash', type: 'text' },
  Active: { column: 'chats.is_active', type: 'bool' },
  Attention: { column: 'chats.needs_attention', type: 'bool' },
  LastUpdDateTime: { column: 'chats.updated_at', type: 'timestamp' },
  HandoffReason: { column: 'chats.handoff_reason', type: 'text' },
};

/** A chat and the client of its use case, which is what scopes it. */
export type ChatRow = Omit<Selectable<ChatsTable>, 'created_at'> & Pick<Selectable<UsecasesTable>, 'client_id'>;

export interface ChatListScope {
  onlyClientId?: number | null;
  userId?: number;
  hash?: string;
  changedSince?: Date;
  ids?: number[];
  where?: Expression<SqlBool>;
}

/** One sentence said in a chat, written together with the chat's other changes. */
export interface SaidSentence {
  text: string;
  tokens: number;
  role: SentenceRole;
  rate: 0 | 1 | null;
  user_id: number | null;
  /** Provider-reported tokens this sentence cost (assistant replies). */
  usage?: number;
  /** The tool calls and results behind this assistant reply. */
  toolCalls?: ToolTurn[];
}

/** Why a chat was handed to a person, flagged, or sent its automatic message. */
export interface Handoff {
  event: HandoffEvent;
  reason: HandoffReason;
  /** The word or phrase that fired it (reason 'word'). */
  word?: string | null;
  /** The operator who took over (reason 'operator'). */
  user_id?: number | null;
}

/** The chat's `HandoffReason` as shown: the reason, with the word that fired it. */
export const handoffLabel = (h: Handoff): string => (h.reason === 'word' && h.word ? `word: ${h.word}` : h.reason);

/** One use case's hand-offs, counted by reason and event, and how many followed an answer rated bad. */
export interface HandoffCounts {
  usecase_id: number;
  description: string;
  event: HandoffEvent;
  reason: HandoffReason;
  total: number;
  after_bad_answer: number;
}

export interface ChatChanges {
  /** Recorded in order with their reasons; the chat shows the last as its `HandoffReason`. */
  handoffs?: Handoff[];
  finish_at?: Date;
  status?: string;
  control_type?: ControlType;
  user_managing_id?: number | null;
  is_active?: boolean;
  needs_attention?: boolean;
  /** undefined: unchanged; null: nothing scheduled. */
  auto_msg_due_at?: Date | null;
  /** Added to the chat's and its use case's `Tokens`. */
  add_tokens?: number;
}

export interface DueAutoMessage {
  chat_id: number;
  sentence_id: number;
}

export function createChatsRepository(db: Kysely<Database>) {
  const base = () => db.selectFrom('chats').innerJoin('usecases', 'usecases.id', 'chats.usecase_id');

  return {
    /** A new chat and, when the use case has one, its Welcome as the first assistant sentence. */
    async insert(
      chat: { usecase_id: number; user_id: number; hash: string | null; auto_msg_due_at: Date | null },
      welcome: { client_id: number; text: string; tokens: number } | undefined,
      now: Date,
    ): Promise<number> {
      return db.transaction().execute(async (trx) => {
        const { id } = await trx
          .insertInto('chats')
          .values({ ...chat, start_at: now, created_at: now, updated_at: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        if (welcome) {
          const sentence = await trx.insertInto('sentences').values({ ...welcome, created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow();
          await trx.insertInto('chat_sentences').values({ chat_id: id, sentence_id: sentence.id, role: 2, rate: null, user_id: null, created_at: now }).execute();
        }
        return id;
      });
    },

    async findById(id: number): Promise<ChatRow | undefined> {
      return base().select(COLUMNS).where('chats.id', '=', id).executeTakeFirst();
    },

    async list(scope: ChatListScope): Promise<ChatRow[]> {
      if (scope.onlyClientId === null) return [];
      let query = base().select(COLUMNS).orderBy('chats.id');
      if (scope.onlyClientId !== undefined) query = query.where('usecases.client_id', '=', scope.onlyClientId);
      if (scope.userId !== undefined) query = query.where('chats.user_id', '=', scope.userId);
      if (scope.hash !== undefined) query = query.where('chats.hash', '=', scope.hash);
      if (scope.changedSince) query = query.where('chats.updated_at', '>=', scope.changedSince);
      if (scope.ids) query = query.where('chats.id', 'in', scope.ids);
      if (scope.where) query = query.where(scope.where);
      return query.execute();
    },

    /**
     * Writes sentences and the chat's changes in one transaction, after re-checking under a row lock
     * that the chat is still open (a finish may have landed while the provider was answering).
     * Answers the new sentence ids in order. `alsoWrite` runs in the same transaction (the reply's ledger row).
     */
    async record(
      chatId: number,
      clientId: number,
      said: SaidSentence[],
      changes: ChatChanges,
      now: Date,
      alsoWrite?: (trx: Kysely<Database>) => Promise<unknown>,
    ): Promise<number[]> {
      return db.transaction().execute(async (trx) => {
        const locked = await trx.selectFrom('chats').select(['finish_at', 'usecase_id']).where('id', '=', chatId).forUpdate().executeTakeFirst();
        if (!locked) throw Errors.notFound('Chat', chatId);
        if (locked.finish_at !== null) throw Errors.wrongState(`Chat ${chatId} is finished`);
        // Before the new sentences: the hand-off follows the answers already given, not the manual message.
        for (const handoff of changes.handoffs ?? []) await insertHandoff(trx, chatId, locked.usecase_id, handoff, now);
        const ids: number[] = [];
        for (const s of said) {
          const sentence = await trx
            .insertInto('sentences')
            .values({ client_id: clientId, text: s.text, tokens: s.tokens, created_at: now, updated_at: now })
            .returning('id')
            .executeTakeFirstOrThrow();
          await trx
            .insertInto('chat_sentences')
            .values({ chat_id: chatId, sentence_id: sentence.id, role: s.role, rate: s.rate, user_id: s.user_id, tokens: s.usage ?? 0, tool_calls: s.toolCalls?.length ? JSON.stringify(s.toolCalls) : null, created_at: now })
            .execute();
          ids.push(sentence.id);
        }
        await applyChanges(trx, chatId, locked.usecase_id, changes, now);
        if (alsoWrite) await alsoWrite(trx);
        return ids;
      });
    },

    async update(chatId: number, changes: ChatChanges, now: Date): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const chat = await trx.selectFrom('chats').select('usecase_id').where('id', '=', chatId).forUpdate().executeTakeFirst();
        if (!chat) throw Errors.notFound('Chat', chatId);
        for (const handoff of changes.handoffs ?? []) await insertHandoff(trx, chatId, chat.usecase_id, handoff, now);
        await applyChanges(trx, chatId, chat.usecase_id, changes, now);
      });
    },

    async rate(chatId: number, sentenceId: number, rate: 0 | 1): Promise<boolean> {
      const result = await db
        .updateTable('chat_sentences')
        .set({ rate })
        .where('chat_id', '=', chatId)
        .where('sentence_id', '=', sentenceId)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    /**
     * Hand-offs per use case, event and reason within [from, before); `after_bad_answer` counts those whose
     * latest assistant answer before them is rated bad (0).
     */
    async handoffCounts(scope: { onlyClientId?: number | null; usecaseIds?: number[]; from?: Date; before?: Date }): Promise<HandoffCounts[]> {
      if (scope.onlyClientId === null) return [];
      let query = db
        .selectFrom('chat_handoffs as h')
        .innerJoin('usecases as u', 'u.id', 'h.usecase_id')
        .leftJoin('chat_sentences as a', 'a.id', 'h.last_answer_id')
        .select((eb) => [
          'h.usecase_id',
          'u.description',
          'h.event',
          'h.reason',
          eb.fn.countAll<string>().as('total'),
          eb.fn.count<string>('a.id').filterWhere('a.rate', '=', 0).as('after_bad_answer'),
        ])
        .groupBy(['h.usecase_id', 'u.description', 'h.event', 'h.reason'])
        .orderBy('h.usecase_id')
        .orderBy('h.event')
        .orderBy('h.reason');
      if (scope.onlyClientId !== undefined) query = query.where('u.client_id', '=', scope.onlyClientId);
      if (scope.usecaseIds) query = query.where('h.usecase_id', 'in', scope.usecaseIds);
      if (scope.from) query = query.where('h.created_at', '>=', scope.from);
      if (scope.before) query = query.where('h.created_at', '<', scope.before);
      const rows = await query.execute();
      return rows.map((r) => ({ ...r, total: Number(r.total), after_bad_answer: Number(r.after_bad_answer) }));
    },

    /** The earliest silence deadline that sendDueAutoMessages would act on (same conditions), if any. */
    async nextAutoMessageDue(now: Date): Promise<Date | null> {
      const row = await sql<{ due: Date | null }>`
        select min(ch.auto_msg_due_at) as due from chats as ch
        join usecases as uc on uc.id = ch.usecase_id
        where ch.auto_msg_due_at is not null and ch.finish_at is null and ch.control_type = 'auto'
          and uc.is_active and (uc.finish_at is null or uc.finish_at > ${now}) and uc.auto_msg <> ''`.execute(db);
      const due = row.rows[0]?.due ?? null;
      return due === null ? null : new Date(due);
    },

    /**
     * Claims every chat whose silence message is due and writes that message, in one transaction.
     * SKIP LOCKED lets several processes poll together without sending a message twice; the claim
     * clears the schedule, so each silence gets its message once.
     */
    async sendDueAutoMessages(now: Date, limit: number): Promise<DueAutoMessage[]> {
      return db.transaction().execute(async (trx) => {
        const claimed = await sql<{ id: number; usecase_id: number; client_id: number; auto_msg: string }>`
          update chats as c
          set auto_msg_due_at = null, auto_msg_sent_at = ${now}, updated_at = ${now}
          from usecases as u
          where u.id = c.usecase_id and c.id in (
            select ch.id from chats as ch
            join usecases as uc on uc.id = ch.usecase_id
            where ch.auto_msg_due_at <= ${now} and ch.finish_at is null and ch.control_type = 'auto'
              and uc.is_active and (uc.finish_at is null or uc.finish_at > ${now}) and uc.auto_msg <> ''
            order by ch.auto_msg_due_at
            limit ${limit}
            for update of ch skip locked)
          returning c.id, c.usecase_id, u.client_id, u.auto_msg`.execute(trx);
        const sent: DueAutoMessage[] = [];
        for (const row of claimed.rows) {
          const timeout: Handoff = { event: 'auto_message', reason: 'timeout' };
          await insertHandoff(trx, row.id, row.usecase_id, timeout, now);
          await trx.updateTable('chats').set({ handoff_reason: handoffLabel(timeout) }).where('id', '=', row.id).execute();
          const sentence = await trx
            .insertInto('sentences')
            .values({ client_id: row.client_id, text: row.auto_msg, tokens: 0, created_at: now, updated_at: now })
            .returning('id')
            .executeTakeFirstOrThrow();
          await trx.insertInto('chat_sentences').values({ chat_id: row.id, sentence_id: sentence.id, role: 2, rate: null, user_id: null, created_at: now }).execute();
          sent.push({ chat_id: row.id, sentence_id: sentence.id });
        }
        return sent;
      });
    },
  };
}

/** A hand-off with its reason; the chat's latest assistant answer at this moment is kept with it. */
async function insertHandoff(trx: Kysely<Database>, chatId: number, usecaseId: number, handoff: Handoff, now: Date): Promise<void> {
  await trx
    .insertInto('chat_handoffs')
    .values((eb) => ({
      chat_id: chatId,
      usecase_id: usecaseId,
      event: handoff.event,
      reason: handoff.reason,
      word: handoff.word ?? null,
      user_id: handoff.user_id ?? null,
      last_answer_id: eb
        .selectFrom('chat_sentences')
        .select((s) => s.fn.max('id').as('id'))
        .where('chat_id', '=', chatId)
        .where('role', '=', 2),
      created_at: now,
    }))
    .execute();
}

async function applyChanges(trx: Kysely<Database>, chatId: number, usecaseId: number, changes: ChatChanges, now: Date): Promise<void> {
  const { add_tokens: addTokens, handoffs, ...rest } = changes;
  const last = handoffs?.at(-1);
  const columns = last ? { ...rest, handoff_reason: handoffLabel(last) } : rest;
  await trx
    .updateTable('chats')
    .set((eb) => ({
      ...columns,
      updated_at: now,
      ...(addTokens ? { tokens: sql<number>`greatest(0, ${eb.ref('tokens')} + ${addTokens})` } : {}),
    }))
    .where('id', '=', chatId)
    .execute();
  if (addTokens) {
    await trx
      .updateTable('usecases')
      .set((eb) => ({ tokens: sql<number>`greatest(0, ${eb.ref('tokens')} + ${addTokens})`, updated_at: now, hash: newUsecaseHash() }))
      .where('id', '=', usecaseId)
      .execute();
  }
}

export type ChatsRepository = ReturnType<typeof createChatsRepository>;
