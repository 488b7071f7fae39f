import type { TrainingStatus } from '../../db/tables/jobs.js';

/** Training status codes, stored in trainings.status and sent as `status`. */
export const TRAINING_STATUS = {
  /** No model yet. */
  Created: 0,
  Training: 1,
  Trained: 2,
  Failed: 3,
} as const satisfies Record<string, TrainingStatus>;

export const isTrainingStatus = (n: number): n is TrainingStatus => Number.isInteger(n) && n >= TRAINING_STATUS.Created && n <= TRAINING_STATUS.Failed;
