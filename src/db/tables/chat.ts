import type { ColumnType, Generated } from 'kysely';

export interface ClientsTable {
  id: Generated<number>;
  fiscal_id: string | null;
  company_name: string | null;
  company_legal_name: string | null;
  company_address1: string | null;
  company_address2: string | null;
  company_address3: string | null;
  company_city: string | null;
  company_zip_code: string | null;
  /** AES-256-GCM ciphertext of the provider key (see domain/chat/secret-box.ts). */
  provider_key_enc: string | null;
  /** Masked key (`sk-...abcd`) shown to administrators. */
  provider_key_hint: string | null;
  created_by: number | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface UsecasesTable {
  id: Generated<number>;
  client_id: number;
  user_id: number | null;
  description: Generated<string>;
  welcome: Generated<string>;
  start_at: Generated<Date>;
  finish_at: Date | null;
  tokens: Generated<number>;
  words_for_manual: Generated<string>;
  words_for_attention: Generated<string>;
  timeout_for_auto_msg: Generated<number>;
  auto_msg: Generated<string>;
  manual_message: Generated<string>;
  temperature: Generated<number>;
  is_active: Generated<boolean>;
  /** Tokens one chat may use (0: no limit). */
  token_budget: Generated<number>;
  /** The assistant may call the forecast tools (list_jobs, read_forecast, predict). */
  model_tools: Generated<boolean>;
  hash: string;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface SentencesTable {
  id: Generated<number>;
  client_id: number;
  text: string;
  tokens: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface UsecaseSentencesTable {
  usecase_id: number;
  sentence_id: number;
  position: number;
}

export type ControlType = 'auto' | 'manual';

export interface ChatsTable {
  id: Generated<number>;
  usecase_id: number;
  user_id: number | null;
  start_at: Generated<Date>;
  finish_at: Date | null;
  status: Generated<string>;
  control_type: Generated<ControlType>;
  user_managing_id: number | null;
  tokens: Generated<number>;
  hash: string | null;
  is_active: Generated<boolean>;
  needs_attention: Generated<boolean>;
  auto_msg_due_at: Date | null;
  auto_msg_sent_at: Date | null;
  /** The last hand-off's reason as shown (`word: <word>`, `operator`, `timeout`, `budget`). */
  handoff_reason: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type HandoffEvent = 'manual' | 'attention' | 'auto_message';
export type HandoffReason = 'word' | 'operator' | 'timeout' | 'budget';

export interface ChatHandoffsTable {
  id: Generated<number>;
  chat_id: number;
  usecase_id: number;
  event: HandoffEvent;
  reason: HandoffReason;
  word: string | null;
  user_id: number | null;
  last_answer_id: number | null;
  created_at: Generated<Date>;
}

/** Sentence role: 0 system, 1 user, 2 assistant. */
export type SentenceRole = 0 | 1 | 2;

export interface ChatSentencesTable {
  id: Generated<number>;
  chat_id: number;
  sentence_id: number;
  role: SentenceRole;
  rate: 0 | 1 | null;
  user_id: number | null;
  tokens: Generated<number>;
  /** The tool calls and results that led to this assistant sentence (written as JSON text); null when none. */
  tool_calls: ColumnType<ToolTurn[] | null, string | null | undefined, string | null>;
  created_at: Generated<Date>;
}

/** One tool call of an assistant reply, with what the service answered to it. */
export interface ToolTurn {
  id: string;
  name: string;
  /** The arguments as the model sent them (JSON text). */
  arguments: string;
  /** What the tool answered (JSON text), fed back to the model. */
  result: string;
}

export interface ChatTables {
  clients: ClientsTable;
  usecases: UsecasesTable;
  sentences: SentencesTable;
  usecase_sentences: UsecaseSentencesTable;
  chats: ChatsTable;
  chat_sentences: ChatSentencesTable;
  chat_handoffs: ChatHandoffsTable;
}
