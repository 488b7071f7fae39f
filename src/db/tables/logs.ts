import type { Generated } from 'kysely';

export interface LogsTable {
  id: Generated<number>;
  host: Generated<string>;
  pid: Generated<number>;
  procedure: Generated<string>;
  /** 4 Error, 3 Warning, 2 Normal, 1 Verbose, 0 Extra verbose. */
  type: Generated<number>;
  text: string;
  user_id: number | null;
  request_id: string | null;
  created_at: Generated<Date>;
}

/** What one consumption record bills: a training run, a chat reply or a POST /aichat prompt. */
export type ConsumptionKind = 'training' | 'chat' | 'aichat';

/** Resource use of one run (ram and disk in MB, cpu in seconds) or one model reply (tokens). */
export interface ConsumptionsTable {
  id: Generated<number>;
  user_id: number;
  job_id: number | null;
  training_id: number | null;
  app_name: Generated<string>;
  host: Generated<string>;
  pid: Generated<number>;
  ram: Generated<number>;
  cpu: Generated<number>;
  disk: Generated<number>;
  date: Generated<Date>;
  date_invoiced: Date | null;
  kind: Generated<ConsumptionKind>;
  client_id: number | null;
  usecase_id: number | null;
  chat_id: number | null;
  model: string | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
}

export interface LogsTables {
  logs: LogsTable;
  consumptions: ConsumptionsTable;
}
