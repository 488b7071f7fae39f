import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { p } from '../../http/params.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { createTrainingRoute } from '../202203010900/trainings.routes.js';
import { JobId, JobRecord, jobRecord } from '../shared/jobs.shapes.js';
import { success } from '../../http/contract.js';

/** Older version (spec 9): jobs by training_id for the `forecast` app, and POST /trainings.php only. */
export function jobsRoutes(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'GET',
    url: '/jobs.php',
    auth: 'session',
    summary: 'Jobs the caller may see (job_id=0: all)',
    params: z.object({ tz: p.tz(), job_id: p.int().refine((v) => v >= 0, { error: 'must be 0 (all) or a job id' }) }),
    reply: z.array(JobRecord),
    async handler({ params, caller }) {
      const jobs = await services.jobs.list(caller, { tz: params.tz, jobId: params.job_id });
      return jobs.map((job) => jobRecord(job, params.tz));
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/jobs.php',
    auth: 'session',
    summary: 'Create a job of an existing training; answers the job id',
    params: z.object({
      tz: p.tz().optional(),
      training_id: p.id(),
      app_name: z.literal('forecast', { error: "must be 'forecast'" }),
    }),
    reply: JobId,
    async handler({ params, caller }) {
      const created = await services.jobs.create(caller, {
        tz: params.tz ?? 'UTC',
        appName: params.app_name,
        newTraining: false,
        trainingId: params.training_id,
      });
      return created.jobId;
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/jobs.php',
    auth: 'session',
    summary: 'Delete a job (by id) that is not queued or running, with its data',
    params: z.object({ id: p.id() }),
    reply: success,
    async handler({ params, caller }) {
      await services.jobs.delete(caller, params.id);
      return 'success';
    },
  });

  createTrainingRoute(app, services);
}
