import type { ColumnType, Generated } from 'kysely';
import type { SelectionReport } from '../../training/index.js';

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

/**
 * A job in parts (a panel spread over every process's training threads): its plan, stored once for every
 * unit.
 */
export interface JobPlansTable {
  job_id: number;
  plan: string;
  header: string;
  global: string | null;
  stat_id: number | null;
  cpu_seconds: number | null;
  peak_bytes: number | null;
  parts: number;
  created_at: Generated<Date>;
}

/** Part status: 0 queued, 1 running, 2 done. */
export type PartStatus = 0 | 1 | 2;

/** A unit of a job in parts: a round of the global model (stage 1) or a group of series (stage 2). */
export interface JobPartsTable {
  job_id: number;
  part: number;
  stage: number;
  owner: number;
  status: Generated<number>;
  worker: string | null;
  attempts: Generated<number>;
  cost: Generated<number>;
  task: string;
  outcome: string | null;
  cpu_seconds: number | null;
  peak_bytes: number | null;
  queued_at: Generated<Date>;
  started_at: Date | null;
  heartbeat_at: Date | null;
  finished_at: Date | null;
}

/** When each owner last had a unit of work claimed (fair turns). */
export interface OwnerTurnsTable {
  user_id: number;
  last_claim_at: Date;
}

export interface JobsTables {
  trainings: TrainingsTable;
  jobs: JobsTable;
  job_plans: JobPlansTable;
  job_parts: JobPartsTable;
  owner_turns: OwnerTurnsTable;
}
