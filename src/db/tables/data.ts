import type { ColumnType, Generated } from 'kysely';
import type { ColumnKind, ColumnRole, DatePart } from '../../training/types.js';

export type DatasetKind = 'input' | 'output';
// The column vocabulary is the training engine's: a dataset's roles are what it trains on.
export type DataColumnRole = ColumnRole;
export type DataColumnKind = ColumnKind;
export type DataDatePart = DatePart;

/** One CSV column of a dataset: its name, where its cells live (c<col>) and its role for training. */
export interface DatasetColumn {
  name: string;
  col: number;
  role: DataColumnRole;
  /** Detected from the cells on first need; null until then. */
  kind: DataColumnKind | null;
  datePart?: DataDatePart;
}

export interface DatasetsTable {
  id: Generated<number>;
  job_id: number;
  kind: DatasetKind;
  columns: ColumnType<DatasetColumn[], string, string>;
  row_count: Generated<number>;
  source: Generated<string>;
  created_at: Generated<Date>;
}

/** Rows live in per-dataset tables data_rows_<id> (ord, c1..cN), reached with raw SQL by id only. */
export interface DataTables {
  datasets: DatasetsTable;
}
