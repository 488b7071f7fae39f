import type { DataColumnKind, DataColumnRole, DataDatePart, DatasetColumn } from '../../db/tables/data.js';

/** Column names that hold a date part, matched case-insensitively (English and Spanish). */
const DATE_PART_NAMES: Record<string, DataDatePart> = {
  year: 'year',
  'año': 'year',
  anio: 'year',
  ano: 'year',
  month: 'month',
  mes: 'month',
  day: 'day',
  dia: 'day',
  'día': 'day',
  hour: 'hour',
  hora: 'hour',
  minute: 'minute',
  minuto: 'minute',
};

export function datePartOf(name: string): DataDatePart | undefined {
  return DATE_PART_NAMES[name.trim().toLowerCase()];
}

/** Default roles: date-part columns by name, the last other column the output, the rest inputs. */
export function defaultColumns(header: string[]): DatasetColumn[] {
  const columns: DatasetColumn[] = header.map((name, i) => {
    const datePart = datePartOf(name);
    return datePart ? { name, col: i + 1, role: 'date', kind: 'numeric', datePart } : { name, col: i + 1, role: 'input', kind: null };
  });
  const last = [...columns].reverse().find((c) => c.role !== 'date');
  if (last) last.role = 'output';
  return columns;
}

/**
 * What a `{column-name}` field of PUT /data may say: `ignore` drops the column; a role, a kind or a
 * date part sets it. Spanish date-part names are accepted as in headers.
 */
export type ColumnMapping =
  | { drop: true }
  | { drop: false; role?: Exclude<DataColumnRole, 'ignore'>; kind?: DataColumnKind; datePart?: DataDatePart };

export const MAPPING_VALUES = [
  { type: 'input', description: 'the column feeds the model' },
  { type: 'output', description: 'the column is forecast by the model' },
  { type: 'key', description: 'the column names the series a row belongs to (store, station): each series is forecast on its own' },
  { type: 'ignore', description: 'the column is dropped' },
  { type: 'numeric', description: 'the values are numbers' },
  { type: 'categorical', description: 'the values are labels' },
  { type: 'year', description: 'date part: year' },
  { type: 'month', description: 'date part: month' },
  { type: 'day', description: 'date part: day' },
  { type: 'hour', description: 'date part: hour' },
  { type: 'minute', description: 'date part: minute' },
] as const;

export function parseMapping(value: string): ColumnMapping | undefined {
  const v = value.trim().toLowerCase();
  if (v === 'ignore') return { drop: true };
  if (v === 'input' || v === 'output' || v === 'key') return { drop: false, role: v };
  if (v === 'numeric' || v === 'categorical') return { drop: false, kind: v };
  const datePart = DATE_PART_NAMES[v];
  if (datePart) return { drop: false, role: 'date', datePart, kind: 'numeric' };
  return undefined;
}

/** Applies mappings by column name; answers the new column list. */
export function applyMappings(columns: DatasetColumn[], mappings: Map<string, ColumnMapping>): DatasetColumn[] {
  const next: DatasetColumn[] = [];
  for (const column of columns) {
    const mapping = mappings.get(column.name);
    if (!mapping) {
      next.push(column);
      continue;
    }
    if (mapping.drop) continue;
    const changed: DatasetColumn = { ...column };
    if (mapping.role) {
      changed.role = mapping.role;
      changed.stated = true;
      if (mapping.role === 'date') changed.datePart = mapping.datePart;
      else delete changed.datePart;
    }
    if (mapping.kind && changed.role !== 'date') changed.kind = mapping.kind;
    next.push(changed);
  }
  return next;
}
