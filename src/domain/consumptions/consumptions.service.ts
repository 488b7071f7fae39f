import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ConsumptionKind } from '../../db/tables/logs.js';
import type { Caller } from '../caller.js';
import { Errors } from '../errors.js';
import type { Clock } from '../ports.js';
import { ownerScope } from '../shared/access.js';
import { filterExpression } from '../shared/filter/index.js';
import {
  CONSUMPTION_COLUMNS,
  type ConsumptionListFilter,
  type ConsumptionRow,
  type ConsumptionsRepository,
} from './consumptions.repository.js';

export type { ConsumptionRow };

export interface ConsumptionQuery extends Omit<ConsumptionListFilter, 'onlyUserId' | 'condition'> {
  /** The filter language over the Consumption's wire names. */
  filters?: string;
  tz: string;
}

/** One run's resource use, as the training engine reports it. */
export interface RunConsumption {
  userId: number;
  jobId?: number | null;
  trainingId?: number | null;
  appName: string;
  host: string;
  pid: number;
  /** Peak resident memory, MB. */
  ramMb: number;
  /** CPU time (user + system), seconds. */
  cpuSeconds: number;
  /** Data stored for the run, MB. */
  diskMb: number;
  /** When the run ended; defaults to now. */
  date?: Date;
}

/** One language-model reply, as the provider counted it (tool turns included). */
export interface ReplyConsumption {
  kind: Exclude<ConsumptionKind, 'training'>;
  userId: number;
  clientId: number | null;
  usecaseId?: number | null;
  chatId?: number | null;
  model: string;
  promptTokens: number;
  completionTokens: number;
  date?: Date;
}

export function createConsumptionsService(deps: { consumptions: ConsumptionsRepository; clock: Clock; host?: string; pid?: number }) {
  const { consumptions, clock } = deps;
  const host = deps.host ?? hostname();
  const pid = deps.pid ?? process.pid;
  const amount = (name: string, value: number) => {
    if (!Number.isFinite(value) || value < 0) throw Errors.invalidParameter(name, 'must be a non-negative number');
    return value;
  };

  return {
    /** Consumers see their own records, administrators everyone's. */
    async list(caller: Caller, query: ConsumptionQuery): Promise<ConsumptionRow[]> {
      const { filters, tz, ...filter } = query;
      return consumptions.list({
        ...filter,
        onlyUserId: ownerScope(caller),
        condition: filterExpression(filters, CONSUMPTION_COLUMNS, { parameter: 'filters', tz }),
      });
    },

    /**
     * Called by the training engine once per run; answers the record id. `executor`: the transaction that
     * finishes the run, so a Finished job always has its record.
     */
    async record(run: RunConsumption, executor?: Kysely<Database>): Promise<number> {
      return consumptions.insert({
        user_id: run.userId,
        job_id: run.jobId ?? null,
        training_id: run.trainingId ?? null,
        app_name: run.appName,
        host: run.host,
        pid: run.pid,
        ram: amount('ram', run.ramMb),
        cpu: amount('cpu', run.cpuSeconds),
        disk: amount('disk', run.diskMb),
        date: run.date ?? clock.now(),
      }, executor);
    },

    /**
     * Called for every language-model reply (chat sentence, POST /aichat); `executor` lets the chat write
     * it in the transaction that stores the reply. Answers the record id.
     */
    async recordReply(reply: ReplyConsumption, executor?: Kysely<Database>): Promise<number> {
      return consumptions.insert(
        {
          user_id: reply.userId,
          job_id: null,
          training_id: null,
          app_name: '',
          host,
          pid,
          ram: 0,
          cpu: 0,
          disk: 0,
          date: reply.date ?? clock.now(),
          kind: reply.kind,
          client_id: reply.clientId,
          usecase_id: reply.usecaseId ?? null,
          chat_id: reply.chatId ?? null,
          model: reply.model,
          prompt_tokens: amount('prompt_tokens', reply.promptTokens),
          completion_tokens: amount('completion_tokens', reply.completionTokens),
        },
        executor,
      );
    },

    /** Marks every not yet invoiced record dated before `until` (exclusive) as invoiced now. */
    markInvoiced: (until: Date): Promise<number> => consumptions.markInvoicedBefore(until, clock.now()),

    markInvoicedIds: (ids: readonly number[]): Promise<number> => consumptions.markInvoicedIds(ids, clock.now()),
  };
}

export type ConsumptionsService = ReturnType<typeof createConsumptionsService>;
