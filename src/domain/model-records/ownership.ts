import type { Caller } from '../caller.js';
import { Errors } from '../errors.js';
import { ownerScope } from '../trainings/trainings.service.js';

/** The few facts of a job the model records depend on. */
export interface OwnedJob {
  id: number;
  user_id: number;
  training_id: number;
  app_name: string;
  status: number;
}

export interface OwnedTraining {
  id: number;
  user_id: number;
}

/**
 * Lookups scoped by owner (`ownerId` undefined: any user's, for administrators); wired to the jobs and
 * trainings repositories so the model area shares their notion of visibility.
 */
export interface OwnershipLookups {
  job(id: number, ownerId: number | undefined): Promise<OwnedJob | undefined>;
  training(id: number, ownerId: number | undefined): Promise<OwnedTraining | undefined>;
}

export async function requireJob(lookups: OwnershipLookups, caller: Caller, jobId: number): Promise<OwnedJob> {
  const job = await lookups.job(jobId, ownerScope(caller));
  if (!job) throw Errors.notFound('Job', jobId);
  return job;
}

export async function requireTraining(lookups: OwnershipLookups, caller: Caller, trainingId: number): Promise<OwnedTraining> {
  const training = await lookups.training(trainingId, ownerScope(caller));
  if (!training) throw Errors.notFound('Training', trainingId);
  return training;
}
