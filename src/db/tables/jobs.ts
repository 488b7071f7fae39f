import type { ColumnType, Generated } from 'kysely';
import type { SelectionReport } from '../../training/types.js';

/** Training status: 0 Created, 1 Training, 2 Trained, 3 Failed. */
export type TrainingStatus = 0 | 1 | 2 | 3;
/** Job status: 0 Created, 1 Pending, 2 Running, 3 Finished, 4 Failed, 5 Aborted. */
export type JobStatus = 0 | 1 | 2 | 3 | 4 | 5;

export interface TrainingsTable {
  id: Generated<number>;
  user_id: number;
  app_name: Generated<string>;
  description: Generated<string>;
  status: Generated<number>;
  neurons: Generated<number>;
  inputs: Generated<number>;
  outputs: Generated<number>;
  layers_requested: Generated<number>;
  layers_created: Generated<number>;
  success_rate: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface JobsTable {
  id: Generated<number>;
  user_id: number;
  training_id: number;
  session_id: number | null;
  app_name: Generated<string>;
  status: Generated<number>;
  advance: Generated<number>;
  nets: Generated<string>;
  error: string | null;
  attempts: Generated<number>;
  abort_requested: Generated<boolean>;
  worker: string | null;
  heartbeat_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  /** The engine's explanation of the job's last finished run (written as JSON text); null before one. */
  selection: ColumnType<SelectionReport | null, string | null | undefined, string | null>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface JobsTables {
  trainings: TrainingsTable;
  jobs: JobsTable;
}
