import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { Errors } from '../../domain/errors.js';
import { p } from '../../http/params.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { LegacyTrainingRecord, legacyTrainingRecord, TrainingId, TrainingRecord, trainingRecord } from '../shared/jobs.shapes.js';
import { success } from '../../http/contract.js';

const sortOrder = () =>
  z.preprocess((v) => (typeof v === 'string' ? v.trim().toLowerCase() || undefined : v), z.enum(['asc', 'desc'], { error: "must be 'asc' or 'desc'" }));

/** POST /trainings.php, identical in both versions (the older version has only this one). */
export function createTrainingRoute(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'POST',
    url: '/trainings.php',
    auth: 'session',
    summary: 'Create a training; answers its id',
    params: z.object({ tz: p.tz(), description: p.string(500), app_name: p.string(100).optional() }),
    reply: TrainingId,
    async handler({ params, caller }) {
      return services.trainings.create(caller, { description: params.description, appName: params.app_name });
    },
  });
}

/** Section 4.3 of the current version: trainings and their data. */
export function trainingsRoutes(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'GET',
    url: '/trainings.php',
    auth: 'session',
    summary: 'Trainings: legacy mode by id or job_id+app_name (legacy fields); mode=1 a filtered list',
    params: z.object({
      tz: p.tz(),
      mode: p.int().refine((v) => v === 0 || v === 1, { error: 'must be 1 (or omitted for the legacy mode)' }).optional(),
      id: p.id().optional(),
      job_id: p.id().optional(),
      app_name: p.string(100).optional(),
      status: p.int().optional(),
      date_from: p.date().optional(),
      date_to: p.date().optional(),
      search: p.string(200).optional(),
      limit: p.int().refine((v) => v >= 0, { error: 'must be 0 (no limit) or more' }).optional(),
      sort: sortOrder().optional(),
    }),
    reply: z.union([z.array(TrainingRecord), z.array(LegacyTrainingRecord)]),
    async handler({ params, caller }) {
      if (params.mode === 1) {
        const rows = await services.trainings.list(caller, {
          tz: params.tz,
          status: params.status,
          appName: params.app_name,
          search: params.search,
          dateFrom: params.date_from,
          dateTo: params.date_to,
          limit: params.limit,
          sort: params.sort,
        });
        return rows.map((row) => trainingRecord(row, params.tz));
      }
      const rows = await services.trainings.listLegacy(caller, { id: params.id, jobId: params.job_id, appName: params.app_name });
      return rows.map(legacyTrainingRecord);
    },
  });

  createTrainingRoute(app, services);

  defineRoute(app, {
    method: 'PUT',
    url: '/trainings.php',
    auth: 'session',
    summary: 'update=0: change the description; otherwise set app_name and all model figures',
    params: z.object({
      tz: p.tz(),
      update: p.int().default(0),
      id: p.int().default(0),
      description: p.text(500).optional(),
      app_name: p.string(100).optional(),
      neurons: p.int().default(0),
      inputs: p.int().default(0),
      outputs: p.int().default(0),
      layers_requested: p.int().default(0),
      layers_created: p.int().default(0),
      success_rate: p.number().default(0),
    }),
    reply: success,
    async handler({ params, caller }) {
      if (params.update === 0) {
        if (params.description === undefined) throw Errors.missingParameter('description');
        await services.trainings.updateDescription(caller, params.id, params.description);
      } else {
        if (params.app_name === undefined) throw Errors.missingParameter('app_name');
        await services.trainings.updateFigures(caller, params.id, {
          appName: params.app_name,
          neurons: params.neurons,
          inputs: params.inputs,
          outputs: params.outputs,
          layersRequested: params.layers_requested,
          layersCreated: params.layers_created,
          successRate: params.success_rate,
          description: params.description,
        });
      }
      return 'success';
    },
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/trainings.php',
    auth: 'session',
    summary: 'Set the status of a training (0 Created, 1 Training, 2 Trained, 3 Failed)',
    params: z.object({ tz: p.tz(), status: p.int().default(0), id: p.int().default(0) }),
    reply: success,
    async handler({ params, caller }) {
      await services.trainings.setStatus(caller, params.id, params.status);
      return 'success';
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/training_data.php',
    auth: 'session',
    summary: "Delete the user data of every job of a training; the training and its jobs stay",
    params: z.object({ training_id: p.id() }),
    reply: success,
    async handler({ params, caller }) {
      await services.trainings.deleteData(caller, params.training_id);
      return 'success';
    },
  });
}
