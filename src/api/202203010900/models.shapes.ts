import { z } from 'zod';

const int = z.number().int();
const timestamp = z.string().meta({ example: '2024-03-01 09:30:00' });
const text = z.string().nullable();

/**
 * App record (spec 2, GET /app): every number as a string. `fields` chooses the columns, so every
 * field is optional; a chosen column the row has no value for is null.
 */
export const AppRecord = z
  .object({
    Id: text,
    App_Name: text,
    Job_Id: text,
    Training_Id: text,
    LayersRequested: text,
    LearningRate: text,
    RequestType: text,
    DataRowsToConsider: text,
    NoNegatives: text,
    IncreaseMargin: text,
    DecreaseMargin: text,
    DeviationTarget: text,
    DeviatedTarget: text,
    ModelFamily: text,
    Status: text,
    Host: text,
    Pid: text,
    Probability: text,
    User_Id: text,
    DateTime: text,
    LastUpdDateTime: text,
  })
  .partial()
  .meta({
    example: {
      Job_Id: '41', Training_Id: '9', LayersRequested: '2', LearningRate: '0.1', RequestType: '0', DataRowsToConsider: '0', NoNegatives: '1',
      IncreaseMargin: '0', DecreaseMargin: '0', DeviationTarget: '0', DeviatedTarget: '0',
    },
  });

/** Status record: numbers as strings like the other legacy records. */
export const StatRecord = z
  .object({
    id: z.string(),
    job_id: z.string().nullable(),
    name: z.string(),
    host: z.string(),
    pid: z.string(),
    parameters: z.string(),
    caller: z.string(),
    text: z.string(),
    procedure: z.string(),
    advance: z.string(),
    status: z.string(),
    date: timestamp,
    last_update: timestamp,
    terminated: timestamp.nullable(),
  })
  .meta({
    example: {
      id: '5', job_id: '41', name: 'trainer', host: 'worker-1', pid: '4242', parameters: '{"epochs":200}', caller: 'cron', text: 'epoch 40',
      procedure: 'train', advance: '20', status: '0', date: '2024-03-01 09:30:00', last_update: '2024-03-01 09:31:00', terminated: null,
    },
  });
/** GET /stat with progress_type 1: the count only. */
export const StatCount = z.strictObject({ total: z.string() }).meta({ example: { total: '3' } });

/** Ids of new App records, status records and network weights. */
export const RecordId = int.meta({ example: 17 });

/** GET /netw: a confirmation sentence. */
export const NetworkConfirmation = z.string().meta({ example: 'Network for training 9 stored (20480 bytes, 2024-03-01 09:30:00)' });
