import type { Caller } from '../caller.js';
import { Errors } from '../errors.js';
import type { Clock, LogType } from '../ports.js';
import { requireAdmin } from '../shared/access.js';
import { filterExpression } from '../shared/filter/index.js';
import { LOG_COLUMNS, type LogListFilter, type LogRow, type LogsRepository } from './logs.repository.js';

export type { LogRow };

export const DEFAULT_LOG_LIMIT = 100;
export const MAX_LOG_LIMIT = 1000;

export interface LogQuery extends Omit<LogListFilter, 'condition' | 'limit'> {
  /** 0 or absent: the default. */
  limit?: number;
  /** The filter language over the Log entry's wire names. */
  filters?: string;
  tz: string;
}

export interface ClientLogEntry {
  message: string;
  pid: number;
  host?: string;
  type?: LogType;
  procedure?: string;
}

/** Log entries: anyone signed in may write one, only administrators read them (spec 5). */
export function createLogsService(deps: { logs: LogsRepository; clock: Clock }) {
  const { logs, clock } = deps;
  return {
    async list(caller: Caller, query: LogQuery): Promise<LogRow[]> {
      requireAdmin(caller, 'reading logs');
      const limit = query.limit === undefined || query.limit === 0 ? DEFAULT_LOG_LIMIT : query.limit;
      if (limit < 0 || limit > MAX_LOG_LIMIT) throw Errors.invalidParameter('limit', `must be between 0 and ${MAX_LOG_LIMIT}`);
      return logs.list({
        ...query,
        limit,
        condition: filterExpression(query.filters, LOG_COLUMNS, { parameter: 'filters', tz: query.tz }),
      });
    },

    /** POST /logs: a client process (trainer, front end) reports something. */
    async write(caller: Caller, entry: ClientLogEntry, requestId?: string): Promise<number> {
      return logs.insert(
        {
          host: entry.host ?? '',
          pid: entry.pid,
          procedure: entry.procedure ?? '',
          type: entry.type ?? 2,
          text: entry.message,
          user_id: caller.userId,
          request_id: requestId ?? null,
        },
        clock.now(),
      );
    },
  };
}

export type LogsService = ReturnType<typeof createLogsService>;
