import type { Generated } from 'kysely';

/** App record: training parameters of an app (job_id null: template) or of one job, plus the reported run state. */
export interface AppRecordsTable {
  id: Generated<number>;
  user_id: number;
  app_name: string;
  job_id: number | null;
  training_id: number | null;
  /** 0 = engine default (sized from the data). */
  layers_requested: Generated<number>;
  /** 0 = engine default. */
  learning_rate: Generated<number>;
  /** Last PUT /app request_type: 0 run state, 1 run state + network figures, 2 forecast-only run. */
  request_type: Generated<number>;
  /** 0 = all rows. */
  data_rows_to_consider: Generated<number>;
  no_negatives: Generated<number>;
  /** Percent. */
  increase_margin: Generated<number>;
  /** Percent. */
  decrease_margin: Generated<number>;
  /** Percent tolerance of a successful prediction. */
  deviation_target: Generated<number>;
  /** Percent of deviating predictions at which training stops early; 0 = never. */
  deviated_target: Generated<number>;
  /** 'auto' (backtest selection among every family that applies) or 'network' (the legacy single network). */
  model_family: Generated<string>;
  status: Generated<number>;
  host: Generated<string>;
  pid: Generated<number>;
  probability: number | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** Status record of one trainer run. status: 0 Open, 1 Finished, 2 Failed, 3 Aborted. */
export interface StatRecordsTable {
  id: Generated<number>;
  user_id: number;
  job_id: number | null;
  name: string;
  host: string;
  pid: number;
  parameters: Generated<string>;
  caller: Generated<string>;
  text: Generated<string>;
  procedure: Generated<string>;
  advance: Generated<number>;
  status: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  terminated_at: Date | null;
}

/** Stored network of a training: posted `query` text or the engine's model JSON; data only, never executed. */
export interface NetworkWeightsTable {
  id: Generated<number>;
  training_id: number;
  user_id: number;
  kind: 'query' | 'model';
  content: string;
  created_at: Generated<Date>;
}

export interface ModelsTables {
  app_records: AppRecordsTable;
  stat_records: StatRecordsTable;
  network_weights: NetworkWeightsTable;
}
