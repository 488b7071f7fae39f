import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseColumnsInfo } from '../../domain/data/data-tables.js';
import { Errors } from '../../domain/errors.js';
import { collectParams, p } from '../../http/params.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { columnFields, listOf, probability, receiveUpload, rowsParams } from '../shared/data.handlers.js';
import { success } from '../../http/contract.js';
import { AggregateRow, CurrentUploadForm, DataReply, ModifyReply, OutputConfirmation, UploadConfirmation } from '../shared/data.shapes.js';

/** Sections 4.5 and 4.8 of the current version: data files and data tables. */
export function dataRoutes(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'GET',
    url: '/data.php',
    auth: 'session',
    summary: 'type=0: input or output rows of a job (progress, limit, insight, alter, estimate); type=1: column types and roles',
    params: z.object({
      tz: p.tz(),
      type: p.int().refine((v) => v === 0 || v === 1, { error: 'must be 0 or 1' }).default(0),
      job_id: rowsParams.job_id.optional(),
      output: rowsParams.output.default(0),
      progress: rowsParams.progress.default(0),
      limit: rowsParams.limit.default(0),
      insight: rowsParams.insight.default(0),
      alter: rowsParams.alter.default(0),
      estimate: rowsParams.estimate.optional(),
      intervals: rowsParams.intervals.default(0),
    }),
    reply: DataReply,
    async handler({ params, caller }) {
      if (params.type === 1) {
        return params.job_id === undefined ? services.data.mappingValues() : services.data.columns(caller, params.job_id, params.output);
      }
      if (params.job_id === undefined) throw Errors.missingParameter('job_id');
      return services.data.rows(caller, { ...params, jobId: params.job_id, estimate: params.estimate || undefined });
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/data.php',
    auth: 'session',
    upload: true,
    form: CurrentUploadForm,
    summary: 'Upload CSV data (multipart field Servicefile, `file` files) to a job; a created job becomes pending',
    params: z.object({}),
    reply: UploadConfirmation,
    async handler({ request }) {
      return receiveUpload(request, services, {
        params: z.object({ tz: p.tz(), job_id: p.id(), file: p.int().refine((v) => v >= 1, { error: 'must be 1 or more' }).default(1) }),
        expectedFiles: (params) => params.file,
      });
    },
  });

  defineRoute(app, {
    method: 'PUT',
    url: '/data.php',
    auth: 'session',
    summary: '`period` moves the output dates ahead into a new output record (answers its id); `{column-name}` = ignore or a data type',
    params: z.object({ job_id: p.id(), output: p.flag().default(0), period: p.string(100).optional() }),
    reply: ModifyReply,
    async handler({ params, caller, request }) {
      return services.data.modify(caller, { jobId: params.job_id, output: params.output, period: params.period, fields: columnFields(collectParams(request)) });
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/zdai.php',
    auth: 'session',
    summary: "Grouped/ordered aggregation over a job's input rows described by columns_info",
    params: z.object({
      tz: p.tz(),
      job_id: p.id(),
      group_order: p.int(),
      columns_info: p.string(100_000),
      load_columns: p.int(),
    }),
    reply: z.array(AggregateRow),
    async handler({ params, caller }) {
      return services.data.aggregate(caller, {
        jobId: params.job_id,
        groupOrder: params.group_order,
        columnsInfo: parseColumnsInfo(params.columns_info),
        loadColumns: params.load_columns,
      });
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/zdao.php',
    auth: 'session',
    summary: "Confirmation of a job's latest output",
    params: z.object({ job_id: p.int().default(0) }),
    reply: OutputConfirmation,
    async handler({ params, caller }) {
      return services.data.outputSummary(caller, params.job_id);
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/zdao.php',
    auth: 'session',
    summary: "Replace items with values in a job's latest output, each cell with the given probability",
    params: z.object({ tz: p.tz(), job_id: p.int().default(0), items: p.string(100_000), values: p.text(100_000), probability: probability() }),
    reply: success,
    async handler({ params, caller }) {
      return services.data.replaceInOutput(caller, {
        jobId: params.job_id,
        items: listOf(params.items),
        values: listOf(params.values),
        probability: params.probability,
      });
    },
  });
}
