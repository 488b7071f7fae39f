import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { p } from '../../http/params.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { CreatedJob, JobId, JobRecord, jobRecord, ProgressRecord, progressRecord } from '../shared/jobs.shapes.js';
import { success } from '../../http/contract.js';

/** `status_filter`: job status codes separated by commas ("1,2"). */
const STATUS_CODES = 'must be job status codes (0 to 5) separated by commas';
const statusCodes = () =>
  z.preprocess(
    (v) => {
      if (typeof v === 'number') return [v];
      if (typeof v !== 'string' || v.trim() === '') return undefined;
      const parts = v.split(',').map((s) => s.trim());
      // Anything but digits stays text, so the whole parameter is reported rather than one element.
      return parts.every((s) => /^\d{1,2}$/.test(s)) ? parts.map(Number) : v;
    },
    z.array(z.number(), { error: STATUS_CODES }).refine((codes) => codes.every((c) => c <= 5), { error: STATUS_CODES }),
  );

const zeroToTwo = () => p.int().refine((v) => v >= 0 && v <= 2, { error: 'must be 0, 1 or 2' });

/** Section 4.4 of the current version: jobs, aborts, job data, progress. */
export function jobsRoutes(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'GET',
    url: '/jobs.php',
    auth: 'session',
    summary: 'Jobs the caller may see (job_id=0: all), filtered by status, status_filter, search, dates in tz, app_name',
    params: z.object({
      tz: p.tz(),
      job_id: p.int().refine((v) => v >= 0, { error: 'must be 0 (all) or a job id' }),
      status: p.int().optional(),
      status_filter: statusCodes().optional(),
      search: p.string(200).optional(),
      date_from: p.date().optional(),
      date_to: p.date().optional(),
      app_name: p.string(100).optional(),
    }),
    reply: z.array(JobRecord),
    async handler({ params, caller }) {
      const jobs = await services.jobs.list(caller, {
        tz: params.tz,
        jobId: params.job_id,
        status: params.status,
        statusFilter: params.status_filter,
        search: params.search,
        dateFrom: params.date_from,
        dateTo: params.date_to,
        appName: params.app_name,
      });
      return jobs.map((job) => jobRecord(job, params.tz));
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/jobs.php',
    auth: 'session',
    summary: 'Create a job for app_name (newTraining=1 also creates its training): {job_id, training_id}',
    params: z.object({
      tz: p.tz(),
      app_name: p.string(100),
      newTraining: p.flag().optional(),
      training_id: p.id().optional(),
      description: p.string(500).optional(),
    }),
    reply: CreatedJob,
    async handler({ params, caller }) {
      const created = await services.jobs.create(caller, {
        tz: params.tz,
        appName: params.app_name,
        newTraining: params.newTraining === 1,
        trainingId: params.training_id,
        description: params.description,
      });
      return { job_id: created.jobId, training_id: created.trainingId };
    },
  });

  defineRoute(app, {
    method: 'PUT',
    url: '/jobs.php',
    auth: 'session',
    summary: 'Change a job: training and app while not queued or running; status along the job state machine',
    params: z.object({
      tz: p.tz(),
      job_id: p.id(),
      training_id: p.id(),
      app_name: p.string(100),
      status: p.int().optional(),
    }),
    reply: JobId,
    async handler({ params, caller }) {
      return services.jobs.update(caller, {
        jobId: params.job_id,
        trainingId: params.training_id,
        appName: params.app_name,
        status: params.status,
      });
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/jobs.php',
    auth: 'session',
    summary: 'Delete a job that is not queued or running, with its data',
    params: z.object({ tz: p.tz(), job_id: p.id() }),
    reply: success,
    async handler({ params, caller }) {
      await services.jobs.delete(caller, params.job_id);
      return 'success';
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/job_aborts.php',
    auth: 'session',
    summary: 'Abort a Pending or Running job',
    params: z.object({ job_id: p.id() }),
    reply: success,
    async handler({ params, caller }) {
      await services.jobs.abort(caller, params.job_id);
      return 'success';
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/job_data.php',
    auth: 'session',
    summary: "Delete a job's uploaded data and results; the job stays",
    params: z.object({ tz: p.tz(), job_id: p.id() }),
    reply: success,
    async handler({ params, caller }) {
      await services.jobs.deleteData(caller, params.job_id);
      return 'success';
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/jobs_progress.php',
    auth: 'session',
    summary: 'Progress {Advance} 0-100 of a job (reqType=1: mean of all jobs of app_name); progress=1 adds results, 2 the status record',
    params: z.object({
      tz: p.tz(),
      job_id: p.id().optional(),
      progress: zeroToTwo().optional(),
      reqType: p.int().optional(),
      app_name: p.string(100).optional(),
    }),
    reply: ProgressRecord,
    async handler({ params, caller }) {
      const progress = params.progress ?? 0;
      const report = await services.jobs.progress(caller, {
        jobId: params.job_id,
        appName: params.app_name,
        reqType: params.reqType ?? 0,
        progress,
      });
      return progressRecord(report, progress, params.tz);
    },
  });
}
