import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { Errors } from '../../domain/errors.js';
import type { AppRecordRow } from '../../domain/model-records/app-records.service.js';
import type { StatRecordRow } from '../../domain/model-records/stats.service.js';
import { projectFields } from '../../http/fields.js';
import { p } from '../../http/params.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { formatNullableTimestamp, formatTimestamp } from '../shared/time.js';
import { success } from '../../http/contract.js';
import { AppRecord, NetworkConfirmation, RecordId, StatCount, StatRecord } from './models.shapes.js';

const between = (min: number, max: number, why: string) => p.int().refine((v) => v >= min && v <= max, { error: why });
const nonNegative = () => p.int().refine((v) => v >= 0, { error: 'must not be negative' });
/** Wire ids where 0 means "none" (legacy defaults). */
const idOrZero = () => nonNegative();
const appName = () => p.string(100);
const statusCodes = () =>
  z.preprocess(
    (v) => (typeof v === 'number' ? String(v) : v),
    z
      .string({ error: 'must be status codes separated by commas' })
      .trim()
      .regex(/^\d+(\s*,\s*\d+)*$/, { error: "must be status codes separated by commas, e.g. '0,1'" })
      .transform((text) => [...new Set(text.split(',').map((code) => Number(code.trim())))]),
  );

/** App record: every number as a string (legacy rows); 0 stands for "no job/training". */
// Typed by the documented shape, so a new column cannot be added here without its schema.
function appRecord(row: AppRecordRow, tz: string): Required<z.output<typeof AppRecord>> {
  return {
    Id: String(row.id),
    App_Name: row.app_name,
    Job_Id: String(row.job_id ?? 0),
    Training_Id: String(row.training_id ?? 0),
    LayersRequested: String(row.layers_requested),
    LearningRate: String(row.learning_rate),
    RequestType: String(row.request_type),
    DataRowsToConsider: String(row.data_rows_to_consider),
    NoNegatives: String(row.no_negatives),
    IncreaseMargin: String(row.increase_margin),
    DecreaseMargin: String(row.decrease_margin),
    DeviationTarget: String(row.deviation_target),
    DeviatedTarget: String(row.deviated_target),
    ModelFamily: row.model_family,
    Status: String(row.status),
    Host: row.host,
    Pid: String(row.pid),
    Probability: row.probability === null ? null : String(row.probability),
    User_Id: String(row.user_id),
    DateTime: formatTimestamp(row.created_at, tz),
    LastUpdDateTime: formatTimestamp(row.updated_at, tz),
  };
}

/** Status record, numbers as strings like the other legacy records. */
const statRecord = (row: StatRecordRow, tz: string) => ({
  id: String(row.id),
  job_id: row.job_id === null ? null : String(row.job_id),
  name: row.name,
  host: row.host,
  pid: String(row.pid),
  parameters: row.parameters,
  caller: row.caller,
  text: row.text,
  procedure: row.procedure,
  advance: String(row.advance),
  status: String(row.status),
  date: formatTimestamp(row.created_at, tz),
  last_update: formatTimestamp(row.updated_at, tz),
  terminated: formatNullableTimestamp(row.terminated_at, tz),
});

/** Section 4.6 `/app`, `/stat`, `/netw` (current version only). */
export function modelsRoutes(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'GET',
    url: '/app.php',
    auth: 'session',
    summary: 'App records of an app: type 0 all (filters), 1 one by id or job_id, 2 the parameter templates (filters)',
    params: z.object({
      tz: p.tz(),
      app_id: appName(),
      fields: p.string(2000),
      type: between(0, 2, 'must be 0 (apps), 1 (by id or job id) or 2 (parameters)').default(0),
      /** Required by the spec for types 0 and 2, but an empty value is an absent one: no condition. */
      filters: p.string(2000).optional(),
      id: idOrZero().optional(),
      job_id: idOrZero().optional(),
    }),
    reply: z.array(AppRecord),
    async handler({ params, caller }) {
      const { rows, fields } = await services.appRecords.list(caller, {
        type: params.type as 0 | 1 | 2,
        appName: params.app_id,
        fields: params.fields,
        filters: params.filters,
        id: params.id,
        jobId: params.job_id,
        tz: params.tz,
      });
      return rows.map((row) => projectFields(appRecord(row, params.tz), fields));
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/app.php',
    auth: 'session',
    summary: "Create an App record; simple=1 sets the parameters named in fields (e.g. 'LayersRequested,LearningRate') to params ('2,0.1'); answers its id",
    params: z.object({
      tz: p.tz(),
      app_id: appName(),
      simple: p.flag().default(0),
      fields: p.string(2000).optional(),
      params: p.string(2000).optional(),
    }),
    reply: RecordId,
    async handler({ params, caller }) {
      return services.appRecords.create(caller, { appName: params.app_id, simple: params.simple, fields: params.fields, params: params.params });
    },
  });

  defineRoute(app, {
    method: 'PUT',
    url: '/app.php',
    auth: 'session',
    summary: 'Report the run state of an App record (by id, or the newest of job_id); request_type 1 also the network figures of its training',
    params: z.object({
      tz: p.tz(),
      app_name: appName(),
      id: idOrZero().default(0),
      job_id: idOrZero().default(0),
      training_id: idOrZero().default(0),
      status: nonNegative().default(0),
      request_type: between(0, 2, 'must be 0, 1 or 2'),
      host: p.string(255),
      pid: nonNegative().default(0),
      neurons: p.int().optional(),
      inputs: p.int().optional(),
      outputs: p.int().optional(),
      layers_created: p.int().optional(),
      layers_requested: p.int().optional(),
    }),
    reply: success,
    async handler({ params, caller }) {
      await services.appRecords.report(caller, {
        appName: params.app_name,
        id: params.id,
        jobId: params.job_id,
        trainingId: params.training_id,
        status: params.status,
        requestType: params.request_type as 0 | 1 | 2,
        host: params.host,
        pid: params.pid,
        figures: {
          neurons: params.neurons,
          inputs: params.inputs,
          outputs: params.outputs,
          layersCreated: params.layers_created,
          layersRequested: params.layers_requested,
        },
      });
      return 'success';
    },
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/app.php',
    auth: 'session',
    summary: 'Set the probability (0 to 1) of an App record',
    params: z.object({ tz: p.tz(), app_id: appName(), id: p.id(), probability: p.number() }),
    reply: success,
    async handler({ params, caller }) {
      await services.appRecords.setProbability(caller, { appName: params.app_id, id: params.id, probability: params.probability });
      return 'success';
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/stat.php',
    auth: 'session',
    summary: "Status records: terminate=0 a job's (progress_type 1 the count, 2 the records); otherwise a process's by pid, host, name and status codes",
    params: z.object({
      tz: p.tz(),
      terminate: p.int().default(0),
      job_id: p.id().optional(),
      progress_type: between(1, 2, 'must be 1 (count) or 2 (results)').default(2),
      pid: p.int().optional(),
      host: p.string(255).optional(),
      name: p.string(255).optional(),
      status: statusCodes().optional(),
    }),
    reply: z.union([z.array(StatRecord), z.array(StatCount)]),
    async handler({ params, caller }) {
      if (params.terminate === 0) {
        if (params.job_id === undefined) throw Errors.missingParameter('job_id');
        const result = await services.stats.list(caller, { terminate: 0, jobId: params.job_id, progressType: params.progress_type as 1 | 2 });
        return Array.isArray(result) ? result.map((row) => statRecord(row, params.tz)) : [{ total: String(result.total) }];
      }
      if (params.pid === undefined) throw Errors.missingParameter('pid');
      if (params.host === undefined) throw Errors.missingParameter('host');
      if (params.name === undefined) throw Errors.missingParameter('name');
      if (params.status === undefined) throw Errors.missingParameter('status');
      const rows = await services.stats.list(caller, {
        terminate: params.terminate,
        process: { name: params.name, host: params.host, pid: params.pid },
        statusIn: params.status,
      });
      return (rows as StatRecordRow[]).map((row) => statRecord(row, params.tz));
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/stat.php',
    auth: 'session',
    summary: 'Open a status record for a trainer process; answers its id',
    params: z.object({
      tz: p.tz(),
      name: p.string(255),
      host: p.string(255),
      pid: p.int(),
      /** A trainer without parameters posts the field empty, which reads as absent. */
      parameters: p.text(10_000).default(''),
      caller: p.string(255).optional(),
      text: p.text(10_000).optional(),
      job_id: p.id().optional(),
    }),
    reply: RecordId,
    async handler({ params, caller }) {
      return services.stats.create(caller, {
        name: params.name,
        host: params.host,
        pid: params.pid,
        parameters: params.parameters,
        caller: params.caller,
        text: params.text,
        jobId: params.job_id,
      });
    },
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/stat.php',
    auth: 'session',
    summary: "Modify (terminate=0: procedure, text, advance) or close (1 finished, 2 failed, 3 aborted) a process's open status record",
    params: z.object({
      tz: p.tz(),
      name: p.string(255),
      host: p.string(255),
      pid: p.int(),
      terminate: p.int(),
      procedure: p.text(255).optional(),
      text: p.text(10_000).optional(),
      advance: p.number().optional(),
    }),
    reply: success,
    async handler({ params, caller }) {
      await services.stats.patch(caller, {
        process: { name: params.name, host: params.host, pid: params.pid },
        terminate: params.terminate,
        procedure: params.procedure,
        text: params.text,
        advance: params.advance,
      });
      return 'success';
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/netw.php',
    auth: 'session',
    summary: 'Confirms that a network is stored for a training',
    params: z.object({ tz: p.tz(), training_id: p.id() }),
    reply: NetworkConfirmation,
    async handler({ params, caller }) {
      const stored = await services.networks.confirm(caller, params.training_id);
      return `Network for training ${stored.trainingId} stored (${stored.bytes} bytes, ${formatTimestamp(stored.lastAt, params.tz)})`;
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/netw.php',
    auth: 'session',
    summary: "Store network weights (the `query` text, kept as data, never executed) for training_id or the caller's running job; answers the id",
    params: z.object({ tz: p.tz(), query: p.text(10 * 1024 * 1024), training_id: p.id().optional() }),
    reply: RecordId,
    async handler({ params, caller }) {
      return services.networks.storeQuery(caller, { query: params.query, trainingId: params.training_id });
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/netw.php',
    auth: 'session',
    summary: 'Delete every stored network weight of a training',
    params: z.object({ tz: p.tz(), training_id: p.id() }),
    reply: success,
    async handler({ params, caller }) {
      await services.networks.remove(caller, params.training_id);
      return 'success';
    },
  });
}

