import { z } from 'zod';
import { isAdmin, type Caller } from '../../domain/caller.js';
import type { ChatRow, ChatSentenceRow } from '../../domain/chat/chats.service.js';
import type { ClientRow } from '../../domain/chat/clients.service.js';
import type { SentenceRow, UsecaseSentenceRow } from '../../domain/chat/sentences.service.js';
import type { UsecaseRow } from '../../domain/chat/usecases.service.js';
import { formatNullableTimestamp, formatTimestamp } from '../shared/time.js';
import { eventStreamContract } from '../../http/contract.js';

/**
 * Chat-area records (spec 2): numbers as strings, legacy casing. Listings take `fields`, which picks
 * the columns, so every field of a listed record is optional.
 */
const timestamp = z.string().meta({ example: '2024-03-01 09:30:00' });
const text = z.string().nullable();

/** Client; `CompanyProviderKey` is a masked hint for administrators and null for everyone else. */
export const ClientRecord = z
  .object({
    Id: z.string(),
    FiscalId: text,
    CompanyName: text,
    CompanyLegalName: text,
    CompanyAddress1: text,
    CompanyAddress2: text,
    CompanyAddress3: text,
    CompanyCity: text,
    CompanyZipCode: text,
    CompanyProviderKey: text,
  })
  .partial()
  .meta({
    example: {
      Id: '3', FiscalId: 'B12345678', CompanyName: 'Acme', CompanyLegalName: 'Acme S.L.', CompanyAddress1: 'Calle Mayor 1', CompanyAddress2: null,
      CompanyAddress3: null, CompanyCity: 'Madrid', CompanyZipCode: '28013', CompanyProviderKey: null,
    },
  });

/** Use case; `clie_Id`, `User_Id` and `Active` are additions. */
export const UsecaseRecord = z
  .object({
    Id: z.string(),
    clie_Id: z.string(),
    User_Id: text,
    Description: z.string(),
    Welcome: z.string(),
    StartDateTime: timestamp,
    FinishDateTime: timestamp.nullable(),
    Tokens: z.string(),
    WordsForManual: z.string(),
    WordsForAttention: z.string(),
    TimeOutForAutoMsg: z.string(),
    AutoMsg: z.string(),
    ManualMessage: z.string(),
    LastUpdDateTime: timestamp,
    Hash: z.string(),
    Temperature: z.string(),
    Active: z.enum(['0', '1']),
    /** Addition (so a chat's spending has a bound): tokens a chat may spend before it is handed to a person, '0' = no limit. */
    TokenBudget: z.string(),
    /**
     * Addition (so the assistant can answer from the user's own forecasts): '1' offers the assistant the
     * forecast tools over the chat user's jobs.
     */
    ModelTools: z.enum(['0', '1']),
  })
  .partial()
  .meta({
    example: {
      Id: '5', clie_Id: '3', User_Id: '12', Description: 'Store assistant', Welcome: 'Hello! How can I help?', StartDateTime: '2024-03-01 09:30:00',
      FinishDateTime: null, Tokens: '120', WordsForManual: 'human,agent', WordsForAttention: 'complaint', TimeOutForAutoMsg: '300',
      AutoMsg: 'Are you still there?', ManualMessage: 'An agent will answer shortly', LastUpdDateTime: '2024-03-01 09:30:00',
      Hash: 'f3a9c2', Temperature: '0.7', Active: '1',
    },
  });

/** Chat; `User_Id`, `Active`, `Attention` and `LastUpdDateTime` are additions. */
export const ChatRecord = z
  .object({
    Id: z.string(),
    usca_Id: z.string(),
    User_Id: text,
    StartDateTime: timestamp,
    FinishDateTime: timestamp.nullable(),
    Status: z.string(),
    ControlType: z.string(),
    UserManaging_Id: text,
    Tokens: z.string(),
    Hash: text,
    Active: z.enum(['0', '1']),
    Attention: z.enum(['0', '1']),
    /**
     * Addition (so an operator sees why a person took over): why the chat was last handed off (e.g.
     * `word: human`, `budget`), null if never.
     */
    HandoffReason: z.string().nullable(),
    LastUpdDateTime: timestamp,
  })
  .partial()
  .meta({
    example: {
      Id: '77', usca_Id: '5', User_Id: '12', StartDateTime: '2024-03-01 09:30:00', FinishDateTime: null, Status: 'open', ControlType: 'auto',
      UserManaging_Id: null, Tokens: '310', Hash: 'c0ffee', Active: '1', Attention: '0', LastUpdDateTime: '2024-03-01 09:35:00',
    },
  });

/**
 * Sentence: `Id`, `Text` as the spec says, plus `Tokens`, `clie_Id`, `DateTime`; a chat's sentences add
 * `Role`, `Rate` and `User_Id`, a use case's sentences add `Order`.
 */
export const SentenceRecord = z
  .object({
    Id: z.string(),
    Text: z.string(),
    Tokens: z.string(),
    clie_Id: z.string(),
    DateTime: timestamp,
    Role: z.string(),
    Rate: text,
    User_Id: text,
    Tools: text,
    Order: z.string(),
  })
  .partial()
  .meta({ example: { Id: '301', Text: 'Hello! How can I help?', Tokens: '7', clie_Id: '3', DateTime: '2024-03-01 09:30:00', Role: '2', Rate: null, User_Id: null } });

/** Ids of new clients, use cases, chats and sentences. */
export const ChatAreaId = z.number().int().meta({ example: 77 });

/** POST /usecase_sentence: how many links were made. */
export const LinkCount = z.number().int().meta({ example: 2 });

/** POST /aichat: the reply text, or with tokens=1 the prompt's token count (Accept: text/event-stream streams instead). */
export const PromptReply = z.union([z.string(), z.number().int()]).meta({ example: 'Our store opens at 9:00.' });

/** POST /aichat with Accept: text/event-stream: the reply text in `delta` pieces, then the whole text and the provider's usage. */
export const PromptStream = eventStreamContract({
  events: { delta: z.object({ text: z.string() }) },
  done: z.string(),
  extra: { usage: z.object({ prompt: z.number().int(), completion: z.number().int(), total: z.number().int() }) },
  example: [
    { event: 'delta', data: { text: 'Our store ' } },
    { event: 'delta', data: { text: 'opens at 9:00.' } },
    { event: 'done', data: { status: 0, data: 'Our store opens at 9:00.', usage: { prompt: 14, completion: 8, total: 22 } } },
  ],
});

/** GET /handoffs (addition): hand-offs per use case, by reason and by event. */
export const HandoffReport = z
  .object({
    usca_Id: z.number().int(),
    Description: z.string(),
    Handoffs: z.number().int(),
    ByReason: z.record(z.string(), z.number()),
    ByEvent: z.record(z.string(), z.number()),
    AfterBadAnswer: z.number().int(),
    AfterBadAnswerShare: z.number(),
  })
  .meta({
    example: {
      usca_Id: 5, Description: 'Store assistant', Handoffs: 4, ByReason: { word: 2, operator: 1, timeout: 1, budget: 0 },
      ByEvent: { manual: 3, attention: 1, auto_message: 0 }, AfterBadAnswer: 1, AfterBadAnswerShare: 0.25,
    },
  });

// ---------- mappers from the services' rows (numbers as strings, legacy casing; additions in docs/interface-notes.md) ----------

const str = (n: number | null) => (n === null ? null : String(n));
const flag = (b: boolean): '1' | '0' => (b ? '1' : '0');

/** The provider key is never returned: masked for administrators, null for everyone else. */
export const clientRecord = (row: ClientRow, caller: Caller): z.output<typeof ClientRecord> => ({
  Id: String(row.id),
  FiscalId: row.fiscal_id,
  CompanyName: row.company_name,
  CompanyLegalName: row.company_legal_name,
  CompanyAddress1: row.company_address1,
  CompanyAddress2: row.company_address2,
  CompanyAddress3: row.company_address3,
  CompanyCity: row.company_city,
  CompanyZipCode: row.company_zip_code,
  CompanyProviderKey: isAdmin(caller) ? row.provider_key_hint : null,
});

export const usecaseRecord = (row: UsecaseRow, tz: string): z.output<typeof UsecaseRecord> => ({
  Id: String(row.id),
  clie_Id: String(row.client_id),
  User_Id: str(row.user_id),
  Description: row.description,
  Welcome: row.welcome,
  StartDateTime: formatTimestamp(row.start_at, tz),
  FinishDateTime: formatNullableTimestamp(row.finish_at, tz),
  Tokens: String(row.tokens),
  WordsForManual: row.words_for_manual,
  WordsForAttention: row.words_for_attention,
  TimeOutForAutoMsg: String(row.timeout_for_auto_msg),
  AutoMsg: row.auto_msg,
  ManualMessage: row.manual_message,
  LastUpdDateTime: formatTimestamp(row.updated_at, tz),
  Hash: row.hash,
  Temperature: String(row.temperature),
  Active: flag(row.is_active),
  TokenBudget: String(row.token_budget),
  ModelTools: flag(row.model_tools),
});

export const chatRecord = (row: ChatRow, tz: string): z.output<typeof ChatRecord> => ({
  Id: String(row.id),
  usca_Id: String(row.usecase_id),
  User_Id: str(row.user_id),
  StartDateTime: formatTimestamp(row.start_at, tz),
  FinishDateTime: formatNullableTimestamp(row.finish_at, tz),
  Status: row.status,
  ControlType: row.control_type,
  UserManaging_Id: str(row.user_managing_id),
  Tokens: String(row.tokens),
  Hash: row.hash,
  Active: flag(row.is_active),
  Attention: flag(row.needs_attention),
  LastUpdDateTime: formatTimestamp(row.updated_at, tz),
  HandoffReason: row.handoff_reason,
});

export const sentenceRecord = (row: SentenceRow, tz: string): z.output<typeof SentenceRecord> => ({
  Id: String(row.id),
  Text: row.text,
  Tokens: String(row.tokens),
  clie_Id: String(row.client_id),
  DateTime: formatTimestamp(row.created_at, tz),
});

export const chatSentenceRecord = (row: ChatSentenceRow, tz: string): z.output<typeof SentenceRecord> => ({
  ...sentenceRecord(row, tz),
  DateTime: formatTimestamp(row.said_at, tz),
  Role: String(row.role),
  Rate: str(row.rate),
  User_Id: str(row.user_id),
  Tools: row.tool_calls_text,
});

export const usecaseSentenceRecord = (row: UsecaseSentenceRow, tz: string): z.output<typeof SentenceRecord> => ({ ...sentenceRecord(row, tz), Order: String(row.position) });
