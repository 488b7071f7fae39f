import type { JobStatus } from '../../db/tables/jobs.js';

/** Job status codes, fixed by the interface notes and README: stored in jobs.status, sent as `Status`. */
export const JOB_STATUS = {
  Created: 0,
  Pending: 1,
  Running: 2,
  Finished: 3,
  Failed: 4,
  Aborted: 5,
} as const satisfies Record<string, JobStatus>;

export const JOB_STATUS_NAMES = Object.fromEntries(Object.entries(JOB_STATUS).map(([name, code]) => [code, name])) as Record<JobStatus, string>;

export const isJobStatus = (n: number): n is JobStatus => Number.isInteger(n) && n >= JOB_STATUS.Created && n <= JOB_STATUS.Aborted;

/** While queued or running, the engine owns the job: its data, training and app stay put. */
export const isActive = (status: number) => status === JOB_STATUS.Pending || status === JOB_STATUS.Running;
/** The engine's end states; from them an owner may queue the job again. */
export const isEnded = (status: number) => status === JOB_STATUS.Finished || status === JOB_STATUS.Failed || status === JOB_STATUS.Aborted;

