import { z } from 'zod';

/** Data row (spec 2): keyed by the CSV header's column names; values are strings (null for an empty cell). */
export const DataRow = z.record(z.string(), z.string().nullable()).meta({ example: { year: '2024', month: '3', day: '1', sales: '1520' } });

/** GET /data progress=1: only the total count. */
export const RowCount = z.strictObject({ count: z.string() }).meta({ example: { count: '1250' } });

/** GET /data type=1 with a job: each column's name, data type and role (date columns name their part). */
export const ColumnDescription = z
  .strictObject({ date_part: z.string().optional(), name: z.string(), type: z.string(), role: z.string() })
  .meta({ example: { name: 'sales', type: 'numeric', role: 'output' } });

/** GET /data type=1 without a job: the values a `{column-name}` field of PUT /data may take. */
export const MappingValue = z.strictObject({ type: z.string(), description: z.string() }).meta({ example: { type: 'input', description: 'the column feeds the model' } });

/** GET /data: the most specific shapes first, so each reply is read (and documented) as what it is. */
export const DataReply = z.union([z.array(RowCount), z.array(ColumnDescription), z.array(MappingValue), z.array(DataRow)]).meta({
  example: [{ year: '2024', month: '3', day: '1', sales: '1520' }],
});

/** POST /data: a confirmation sentence. */
export const UploadConfirmation = z.string().meta({ example: "File 'sales.csv' stored for job 41: 1250 rows, 4 columns" });

/** PUT /data: the id of the new output record when `period` moved the dates, else `success`. */
export const ModifyReply = z.union([z.number().int(), z.string()]).meta({ example: 58 });

/** GET /zdai: row objects keyed by column name or aggregate expression. */
export const AggregateRow = z.record(z.string(), z.string().nullable()).meta({ example: { month: '3', 'sum(sales)': '45210' } });

/** GET /zdao: a confirmation sentence about the job's latest output. */
export const OutputConfirmation = z.string().meta({ example: 'Output 58 of job 41: 20 rows' });

/** The multipart form of POST /data (current): `file` files in `Servicefile` fields. */
export const CurrentUploadForm = z.object({
  tz: z.string(),
  job_id: z.number().int(),
  file: z.number().int().optional().meta({ description: 'number of files (default 1)' }),
  Servicefile: z.string().meta({ format: 'binary', description: 'a CSV file with a header row (text/csv)' }),
});

/** The multipart form of POST /data.php (older): the file field is `servicefile`. */
export const OlderUploadForm = z.object({
  tz: z.string(),
  job_id: z.number().int(),
  servicefile: z.string().meta({ format: 'binary', description: 'a CSV file with a header row (text/csv)' }),
});
