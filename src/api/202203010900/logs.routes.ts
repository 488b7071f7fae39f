import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ConsumptionRow } from '../../domain/consumptions/consumptions.service.js';
import { Errors } from '../../domain/errors.js';
import type { LogRow } from '../../domain/logs/logs.service.js';
import type { LogType } from '../../domain/ports.js';
import { p } from '../../http/params.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { formatNullableTimestamp, formatTimestamp, wireDateToInstant } from '../shared/time.js';
import { ConsumptionRecord, InvoicedCount, LogId, LogRecord } from './logs.shapes.js';

const logType = () =>
  p.int().refine((n) => n >= 0 && n <= 4, { error: 'must be a log type from 0 (extra verbose) to 4 (error)' }).transform((n) => n as LogType);

const listLogsParams = z.object({
  tz: p.tz(),
  host: p.string(255).optional(),
  procedure: p.string(255).optional(),
  date_from: p.date().optional(),
  date_to: p.date().optional(),
  pid: p.int().optional(),
  type: logType().optional(),
  search: p.string(200).optional(),
  limit: p.int().optional(),
  /** Addition: the filter language over id, host, pid, procedure, type, date, text. */
  filters: p.string(2000).optional(),
});

const writeLogParams = z.object({
  tz: p.tz(),
  message: p.string(10_000),
  PID: p.int(),
  host: p.string(255).optional(),
  log_type: logType().optional(),
  caller: p.string(255).optional(),
});

const listConsumptionsParams = z.object({
  /** Not in the spec's list; dates come out in UTC unless a zone is given. */
  tz: p.tz().default('UTC'),
  search: p.string(200).optional(),
  invoiced: p.flag().optional(),
  date_from: p.date().optional(),
  date_to: p.date().optional(),
  app: p.string(100).optional(),
  /** Addition: only records of one kind (training, chat, aichat). */
  kind: z.enum(['training', 'chat', 'aichat'], { error: "must be 'training', 'chat' or 'aichat'" }).optional(),
  /** Addition: the filter language over the Consumption's fields. */
  filters: p.string(2000).optional(),
});

const markInvoicedParams = z.object({
  tz: p.tz().default('UTC'),
  until: p.date().optional(),
  ids: p.idList().optional(),
});

/** Log entry: the request id of a service event is shown in the text, where an administrator searches. */
const logRecord = (row: LogRow, tz: string): z.output<typeof LogRecord> => ({
  id: row.id,
  host: row.host,
  pid: row.pid,
  procedure: row.procedure,
  type: row.type,
  date: formatTimestamp(row.created_at, tz),
  text: row.request_id ? `${row.text} [request ${row.request_id}]` : row.text,
});

/**
 * Consumption record; `id` and `job_id` are additions (an operator marks records invoiced by id), and so
 * are `kind` and the language-model fields (null on training records; ram/cpu/disk 0 on token records).
 */
const consumptionRecord = (row: ConsumptionRow, tz: string): z.output<typeof ConsumptionRecord> => ({
  id: row.id,
  user_id: row.user_id,
  user_name: row.user_name,
  date: formatTimestamp(row.date, tz),
  app_name: row.app_name,
  training_id: row.training_id,
  job_id: row.job_id,
  host: row.host,
  pid: row.pid,
  ram: row.ram,
  cpu: row.cpu,
  disk: row.disk,
  date_invoiced: formatNullableTimestamp(row.date_invoiced, tz),
  kind: row.kind,
  client_id: row.client_id,
  usecase_id: row.usecase_id,
  chat_id: row.chat_id,
  model: row.model,
  prompt_tokens: row.prompt_tokens,
  completion_tokens: row.completion_tokens,
});

/** Section 4.6 `/logs` and `/consumptions` (current version only), plus the invoicing addition. */
export function logsRoutes(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'GET',
    url: '/logs.php',
    auth: 'admin',
    summary: 'Log entries, newest first (administrators only)',
    params: listLogsParams,
    reply: z.array(LogRecord),
    async handler({ params, caller }) {
      const rows = await services.logs.list(caller, {
        tz: params.tz,
        host: params.host,
        procedure: params.procedure,
        from: params.date_from === undefined ? undefined : wireDateToInstant(params.date_from, params.tz, 'date_from'),
        before: params.date_to === undefined ? undefined : wireDateToInstant(params.date_to, params.tz, 'date_to', 'to'),
        pid: params.pid,
        type: params.type,
        search: params.search,
        limit: params.limit,
        filters: params.filters,
      });
      return rows.map((row) => logRecord(row, params.tz));
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/logs.php',
    auth: 'session',
    summary: 'Write a log entry; answers its id',
    params: writeLogParams,
    reply: LogId,
    async handler({ params, caller }) {
      return services.logs.write(caller, {
        message: params.message,
        pid: params.PID,
        host: params.host,
        type: params.log_type,
        procedure: params.caller,
      });
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/consumptions.php',
    auth: 'session',
    summary: "Consumption records (administrators: everyone's)",
    params: listConsumptionsParams,
    reply: z.array(ConsumptionRecord),
    async handler({ params, caller }) {
      const rows = await services.consumptions.list(caller, {
        tz: params.tz,
        search: params.search,
        invoiced: params.invoiced === undefined ? undefined : params.invoiced === 1,
        from: params.date_from === undefined ? undefined : wireDateToInstant(params.date_from, params.tz, 'date_from'),
        before: params.date_to === undefined ? undefined : wireDateToInstant(params.date_to, params.tz, 'date_to', 'to'),
        app: params.app,
        kind: params.kind,
        filters: params.filters,
      });
      return rows.map((row) => consumptionRecord(row, params.tz));
    },
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/consumptions.php',
    auth: 'admin',
    summary: 'Addition: mark records invoiced, all up to a date (until, inclusive) or by ids; answers how many',
    params: markInvoicedParams,
    reply: InvoicedCount,
    async handler({ params }) {
      if (params.until !== undefined && params.ids !== undefined) {
        throw Errors.invalidParameter('ids', "give either 'until' or 'ids', not both");
      }
      if (params.ids !== undefined) return services.consumptions.markInvoicedIds(params.ids);
      if (params.until === undefined) throw Errors.missingParameter("until' or 'ids");
      return services.consumptions.markInvoiced(wireDateToInstant(params.until, params.tz, 'until', 'to'));
    },
  });
}
