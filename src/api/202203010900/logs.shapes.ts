import { z } from 'zod';

const int = z.number().int();
const timestamp = z.string().meta({ example: '2024-03-01 09:30:00' });

/** Log entry (spec 2); `type` 0 (extra verbose) to 4 (error). */
export const LogRecord = z
  .object({ id: int, host: z.string(), pid: int, procedure: z.string(), type: int, date: timestamp, text: z.string() })
  .meta({ example: { id: 120, host: 'worker-1', pid: 4242, procedure: 'train', type: 2, date: '2024-03-01 09:30:00', text: 'training 9 finished' } });

/** A new log entry's id. */
export const LogId = int.meta({ example: 120 });

/** Consumption record (spec 2); `id`, `job_id` and the language-model ledger fields are additions. */
export const ConsumptionRecord = z
  .object({
    id: int,
    user_id: int,
    user_name: z.string(),
    date: timestamp,
    app_name: z.string(),
    training_id: int.nullable(),
    job_id: int.nullable(),
    host: z.string(),
    pid: int,
    ram: z.number(),
    cpu: z.number(),
    disk: z.number(),
    date_invoiced: timestamp.nullable(),
    kind: z.string().meta({ description: 'training, chat or aichat: what consumed' }),
    client_id: int.nullable(),
    usecase_id: int.nullable(),
    chat_id: int.nullable(),
    model: z.string().nullable(),
    prompt_tokens: int.nullable(),
    completion_tokens: int.nullable(),
  })
  .meta({
    example: {
      id: 31, user_id: 12, user_name: 'Ana', date: '2024-03-01 09:30:00', app_name: 'forecast', training_id: 9, job_id: 41,
      host: 'worker-1', pid: 4242, ram: 512.5, cpu: 12.25, disk: 3.5, date_invoiced: null, kind: 'training',
      client_id: null, usecase_id: null, chat_id: null, model: null, prompt_tokens: null, completion_tokens: null,
    },
  });

/** PATCH /consumptions: how many records were marked invoiced. */
export const InvoicedCount = int.meta({ example: 3 });
