import type { ColumnType, Generated } from 'kysely';
import type { ColumnKind, ColumnRole, DatePart } from '../../training/index.js';

export type DatasetKind = 'input' | 'output';
// The column vocabulary is the training engine's: a dataset's roles are what it trains on.
export type DataColumnRole = ColumnRole;
export type DataColumnKind = ColumnKind;
export type DataDatePart = DatePart;

/** The four prediction-interval bounds stored with each numeric forecast (80% and 95%). */
export const INTERVAL_BOUNDS = ['lo80', 'hi80', 'lo95', 'hi95'] as const;
export type IntervalBound = (typeof INTERVAL_BOUNDS)[number];

/** One CSV column of a dataset: its name, where its cells live (c<col>) and its role for training. */
export interface DatasetColumn {
  name: string;
  col: number;
  role: DataColumnRole;
  /** Detected from the cells on first need; null until then. */
  kind: DataColumnKind | null;
  datePart?: DataDatePart;
  /**
   * The role was set by the user (PUT /data), not by the upload's defaults (training treats it apart: a
   * stated input empty in every row to forecast is used through its past, an unstated one is forecast as an
   * output).
   */
  stated?: boolean;
  /**
   * Only on an output's prediction-interval columns (named `<of>_<bound>`, role `ignore`): hidden from
   * every reader unless GET /data asks with intervals=1, so legacy clients see the rows they always did.
   */
  interval?: { of: string; bound: IntervalBound };
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
