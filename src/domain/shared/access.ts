import { isAdmin, type Caller } from '../caller.js';
import { Errors } from '../errors.js';

/**
 * Who may reach which rows, in one place. Users own jobs, trainings and records (administrators reach
 * everyone's); chat data belongs to a client (administrators reach every client's). Someone else's row
 * reads as missing, so not-found and not-yours cannot be told apart by outsiders.
 */

/** Whose rows a caller reaches: its own (its user id), or everyone's for administrators (undefined). */
export const ownerScope = (caller: Caller): number | undefined => (isAdmin(caller) ? undefined : caller.userId);

/** Whether the caller may reach a row owned by `ownerId`. */
export const mayReach = (caller: Caller, ownerId: number): boolean => isAdmin(caller) || caller.userId === ownerId;

/** Throws unless the caller is an administrator. */
export function requireAdmin(caller: Caller, what?: string): void {
  if (!isAdmin(caller)) throw Errors.forbidden(what);
}

/** Lookups scoped by owner (`ownerId` undefined: any user's), wired to the jobs and trainings repositories. */
export interface OwnershipLookups {
  job(id: number, ownerId: number | undefined): Promise<OwnedJob | undefined>;
  training(id: number, ownerId: number | undefined): Promise<OwnedTraining | undefined>;
}

/** The few facts of a job other areas depend on. */
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

/**
 * The client whose rows a caller may see: administrators every client (undefined), anyone else only
 * the client its login belongs to (null when it belongs to none, which matches nothing).
 */
export function visibleClient(caller: Caller): number | null | undefined {
  return isAdmin(caller) ? undefined : caller.clientId;
}

/** Throws unless the caller may touch rows of `clientId`; not-found and not-yours read the same to outsiders. */
export function assertClientAccess(caller: Caller, clientId: number, what: string, id: number): void {
  if (isAdmin(caller)) return;
  if (caller.clientId !== clientId) throw Errors.notFound(what, id);
}

/** The client a consumer works in; creating chat data needs one. */
export function requireOwnClient(caller: Caller): number {
  if (caller.clientId === null) {
    throw Errors.noClient();
  }
  return caller.clientId;
}
