import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { Errors } from '../../domain/errors.js';
import { collectParams, p } from '../../http/params.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { columnFields, receiveUpload, rowsParams } from '../shared/data.handlers.js';
import { DataReply, ModifyReply, OlderUploadForm, UploadConfirmation } from '../shared/data.shapes.js';

/** Older version (spec 9): GET/POST/PUT /data.php only; `type` defaults to 1, `tz` everywhere, `servicefile`. */
export function dataRoutes(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'GET',
    url: '/data.php',
    auth: 'session',
    summary: 'type=1 (default): column types and roles; type=0: rows, with every 4.5 parameter required',
    params: z.object({
      tz: p.tz(),
      type: p.int().refine((v) => v === 0 || v === 1, { error: 'must be 0 or 1' }).default(1),
      job_id: rowsParams.job_id.optional(),
      output: rowsParams.output.optional(),
      progress: rowsParams.progress.optional(),
      limit: rowsParams.limit.optional(),
      insight: rowsParams.insight.optional(),
      alter: rowsParams.alter.optional(),
      estimate: rowsParams.estimate.optional(),
      intervals: rowsParams.intervals.default(0),
    }),
    reply: DataReply,
    async handler({ params, caller }) {
      if (params.type === 1) {
        return params.job_id === undefined ? services.data.mappingValues() : services.data.columns(caller, params.job_id, params.output ?? 0);
      }
      const { job_id, output, progress, limit, insight, alter } = params;
      // Required when type is 0 (an empty `estimate` is allowed: it only matters with insight or alter).
      const required = { limit, job_id, output, progress, alter, insight };
      for (const [name, value] of Object.entries(required)) if (value === undefined) throw Errors.missingParameter(name);
      return services.data.rows(caller, {
        jobId: job_id!,
        output: output!,
        progress: progress!,
        limit: limit!,
        insight: insight!,
        alter: alter!,
        estimate: params.estimate || undefined,
        intervals: params.intervals,
      });
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/data.php',
    auth: 'session',
    upload: true,
    form: OlderUploadForm,
    summary: 'Upload CSV data (multipart field servicefile) to a job; a created job becomes pending',
    params: z.object({}),
    reply: UploadConfirmation,
    async handler({ request }) {
      return receiveUpload(request, services, {
        params: z.object({ tz: p.tz(), job_id: p.id() }),
        expectedFiles: () => undefined,
      });
    },
  });

  defineRoute(app, {
    method: 'PUT',
    url: '/data.php',
    auth: 'session',
    summary: '`{column-name}` = ignore (drop) or a data type; `period` moves the output dates ahead into a new output record',
    params: z.object({ tz: p.tz(), job_id: p.id(), output: p.flag().default(0), period: p.string(100).optional() }),
    reply: ModifyReply,
    async handler({ params, caller, request }) {
      return services.data.modify(caller, { jobId: params.job_id, output: params.output, period: params.period, fields: columnFields(collectParams(request)) });
    },
  });
}
