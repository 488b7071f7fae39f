import { sql, type RawBuilder } from 'kysely';
import { z } from 'zod';
import type { DatasetColumn } from '../../db/tables/data.js';
import { Errors } from '../errors.js';
import { cellRef, numericCell, rowsTable, type DatasetRow } from './data.repository.js';

/**
 * GET /zdai's `columns_info`: a JSON array (or one object) describing columns as a reporting front end
 * picks them: which to load, which to aggregate, how to filter and order. Names are matched against the
 * job's real columns and only their positions reach SQL; values travel as parameters.
 */
const scalar = z.union([z.string().max(1000), z.number().finite()]);
const columnInfo = z
  .object({
    name: z.string().min(1).max(200),
    aggregate: z.enum(['sum', 'avg', 'min', 'max', 'count']).optional(),
    value: z.union([scalar, z.array(scalar).min(1).max(1000)]).optional(),
    from: z.number().finite().optional(),
    to: z.number().finite().optional(),
    order: z.enum(['asc', 'desc']).optional(),
  })
  .strict();
const columnsInfoSchema = z.union([z.array(columnInfo).min(1).max(100), columnInfo.transform((one) => [one])]);
export type ColumnsInfo = z.infer<typeof columnInfo>[];

/** Parses the `columns_info` text; every problem names the parameter. */
export function parseColumnsInfo(text: string): ColumnsInfo {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw Errors.invalidParameter('columns_info', 'is not valid JSON');
  }
  const result = columnsInfoSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const where = issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    throw Errors.invalidParameter('columns_info', `${issue.message}${where} (expected [{"name": "...", "aggregate": "sum|avg|min|max|count", "value": ..., "from": n, "to": n, "order": "asc|desc"}])`);
  }
  return result.data;
}

/** Most plain rows /zdai answers without grouping. */
export const ZDAI_ROW_LIMIT = 10_000;

/**
 * Builds the /zdai query. The first `loadColumns` entries (0 = all) are returned; every entry with
 * `value`/`from`/`to` filters. group_order=1 groups by the loaded plain columns, aggregates the others
 * and orders by the groups; group_order=0 answers plain rows in upload order, or one row of aggregates.
 * Result keys are the column name, or `aggregate(name)`; SQL aliases are k0..kn.
 */
export function aggregateQuery(
  dataset: DatasetRow,
  input: { groupOrder: number; columnsInfo: ColumnsInfo; loadColumns: number },
): { query: RawBuilder<unknown>; keys: string[] } {
  const resolve = (name: string): DatasetColumn => {
    const found = dataset.columns.find((c) => c.name === name) ?? dataset.columns.find((c) => c.name.toLowerCase() === name.toLowerCase());
    if (!found) {
      throw Errors.invalidParameter('columns_info', `'${name}' is not a column of job ${dataset.job_id} (columns: ${dataset.columns.map((c) => c.name).join(', ')})`);
    }
    return found;
  };
  if (input.loadColumns < 0) throw Errors.invalidParameter('load_columns', 'must be 0 (all) or a positive number');
  const described = input.columnsInfo.map((info) => ({ info, column: resolve(info.name) }));
  const loaded = input.loadColumns > 0 ? described.slice(0, input.loadColumns) : described;

  const filters: RawBuilder<unknown>[] = [];
  for (const { info, column } of described) {
    const ref = cellRef(column.col);
    if (info.value !== undefined) {
      const list = (Array.isArray(info.value) ? info.value : [info.value]).map(String);
      filters.push(sql`${ref} = any(${list}::text[])`);
    }
    if (info.from !== undefined) filters.push(sql`${numericCell(column.col)} >= ${info.from}`);
    if (info.to !== undefined) filters.push(sql`${numericCell(column.col)} <= ${info.to}`);
  }
  const where = filters.length > 0 ? sql`where ${sql.join(filters, sql` and `)}` : sql``;

  const plain = loaded.filter((d) => !d.info.aggregate);
  const aggregated = loaded.filter((d) => d.info.aggregate);
  const keys = loaded.map(({ info, column }) => (info.aggregate ? `${info.aggregate}(${column.name})` : column.name));
  const orderOf = (d: (typeof loaded)[number]) =>
    d.info.order === 'desc'
      ? sql`${numericCell(d.column.col)} desc nulls last, ${cellRef(d.column.col)} desc`
      : sql`${numericCell(d.column.col)} asc nulls last, ${cellRef(d.column.col)} asc`;

  const expression = ({ info, column }: (typeof loaded)[number]): RawBuilder<unknown> => {
    const ref = cellRef(column.col);
    const numeric = numericCell(column.col);
    switch (info.aggregate) {
      case 'sum':
        return sql`sum(${numeric})`;
      case 'avg':
        return sql`avg(${numeric})`;
      case 'min':
        return column.kind === 'categorical' ? sql`min(nullif(${ref}, ''))` : sql`min(${numeric})`;
      case 'max':
        return column.kind === 'categorical' ? sql`max(nullif(${ref}, ''))` : sql`max(${numeric})`;
      case 'count':
        return sql`count(nullif(${ref}, ''))`;
      default:
        return ref;
    }
  };
  const select = sql.join(loaded.map((d, i) => sql`${expression(d)} as ${sql.ref(`k${i}`)}`));
  const from = rowsTable(dataset.id);

  if (input.groupOrder !== 0 && plain.length > 0) {
    const groups = sql.join(plain.map((d) => cellRef(d.column.col)));
    const order = sql.join(plain.map(orderOf));
    return { query: sql`select ${select} from ${from} ${where} group by ${groups} order by ${order} limit ${ZDAI_ROW_LIMIT}`, keys };
  }
  if (aggregated.length > 0) {
    if (plain.length > 0) throw Errors.invalidParameter('group_order', 'must be 1 to load plain columns beside aggregates');
    return { query: sql`select ${select} from ${from} ${where}`, keys };
  }
  const ordered = plain.filter((d) => d.info.order);
  const order = ordered.length > 0 ? sql.join([...ordered.map(orderOf), sql`ord`]) : sql`ord`;
  return { query: sql`select ${select} from ${from} ${where} order by ${order} limit ${ZDAI_ROW_LIMIT}`, keys };
}
