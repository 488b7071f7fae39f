import type { Caller } from '../caller.js';
import { Errors } from '../errors.js';
import { ownerScope } from '../shared/access.js';
import { instantRange } from '../shared/date-range.js';
import { isActive, JOB_STATUS_NAMES } from '../jobs/job-status.js';
import type { JobsRepository } from '../jobs/jobs.repository.js';
import type { JobStatus } from '../../db/tables/jobs.js';
import { isTrainingStatus } from './training-status.js';
import type { TrainingRow, TrainingsRepository } from './trainings.repository.js';

export type { TrainingRow };

/** The model figures a training reaches (PUT /trainings with update != 0). */
export interface TrainingFigures {
  appName: string;
  neurons: number;
  inputs: number;
  outputs: number;
  layersRequested: number;
  layersCreated: number;
  successRate: number;
  description?: string;
}

/** Removes the user data (uploaded rows, outputs) of one job; the data area provides it. */
export type DataCleaner = (jobId: number) => Promise<void>;

export interface TrainingQuery {
  tz: string;
  status?: number;
  appName?: string;
  search?: string;
  dateFrom?: string;
  dateTo?: string;
  /** 0 or absent: no limit. */
  limit?: number;
  sort?: 'asc' | 'desc';
}

export function createTrainingsService(deps: { trainings: TrainingsRepository; jobs: JobsRepository; dataCleaner: DataCleaner }) {
  const { trainings, jobs } = deps;

  async function visible(caller: Caller, id: number): Promise<TrainingRow> {
    const training = await trainings.findVisible(id, ownerScope(caller));
    if (!training) throw Errors.notFound('Training', id);
    return training;
  }

  return {
    get: visible,

    async create(caller: Caller, input: { description: string; appName?: string }): Promise<number> {
      return trainings.insert({ user_id: caller.userId, description: input.description, app_name: input.appName ?? '' });
    },

    /** Legacy mode: one training by `id`, or the training of job `job_id` in app `app_name`. */
    async listLegacy(caller: Caller, input: { id?: number; jobId?: number; appName?: string }): Promise<TrainingRow[]> {
      let found: TrainingRow | undefined;
      if (input.id !== undefined) {
        found = await trainings.findVisible(input.id, ownerScope(caller));
        if (found && input.appName !== undefined && found.app_name !== input.appName) found = undefined;
      } else {
        if (input.jobId === undefined) throw Errors.missingParameter('job_id');
        if (input.appName === undefined) throw Errors.missingParameter('app_name');
        found = await trainings.findByJob(input.jobId, input.appName, ownerScope(caller));
      }
      return found ? [found] : [];
    },

    /** mode=1: filtered list. */
    async list(caller: Caller, query: TrainingQuery): Promise<TrainingRow[]> {
      if (query.status !== undefined && !isTrainingStatus(query.status)) {
        throw Errors.invalidParameter('status', 'must be a training status 0 to 3');
      }
      return trainings.list({
        ownerId: ownerScope(caller),
        status: query.status,
        appName: query.appName,
        search: query.search,
        range: instantRange(query.dateFrom, query.dateTo, query.tz),
        limit: query.limit || undefined,
        sort: query.sort ?? 'desc',
      });
    },

    async updateDescription(caller: Caller, id: number, description: string): Promise<void> {
      await visible(caller, id);
      await trainings.updateDescription(id, description);
    },

    async updateFigures(caller: Caller, id: number, figures: TrainingFigures): Promise<void> {
      await visible(caller, id);
      await trainings.updateFigures(id, {
        app_name: figures.appName,
        neurons: figures.neurons,
        inputs: figures.inputs,
        outputs: figures.outputs,
        layers_requested: figures.layersRequested,
        layers_created: figures.layersCreated,
        success_rate: figures.successRate,
        ...(figures.description === undefined ? {} : { description: figures.description }),
      });
    },

    async setStatus(caller: Caller, id: number, status: number): Promise<void> {
      if (!isTrainingStatus(status)) throw Errors.invalidParameter('status', 'must be a training status 0 to 3');
      await visible(caller, id);
      await trainings.updateStatus(id, status);
    },

    /** DELETE /training_data: the data of every job of the training; the training and jobs stay. */
    async deleteData(caller: Caller, trainingId: number): Promise<void> {
      await visible(caller, trainingId);
      const ofTraining = await jobs.idsOfTraining(trainingId);
      const busy = ofTraining.find((job) => isActive(job.status));
      if (busy) {
        throw Errors.wrongState(
          `Job ${busy.id} of training ${trainingId} is ${JOB_STATUS_NAMES[busy.status as JobStatus]}; abort it before deleting the training's data`,
        );
      }
      for (const job of ofTraining) await deps.dataCleaner(job.id);
    },

    countTrained: (ownerId: number | undefined) => trainings.countTrained(ownerId),
  };
}

export type TrainingsService = ReturnType<typeof createTrainingsService>;
