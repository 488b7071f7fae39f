import type { TrainingParams } from '../../training/index.js';
import type { Caller } from '../caller.js';
import { Errors } from '../errors.js';
import type { Clock } from '../ports.js';
import { filterExpression, parseFields } from '../shared/filter/index.js';
import { ownerScope } from '../shared/access.js';
import {
  APP_RECORD_COLUMNS,
  type AppParameters,
  type AppRecordRow,
  type AppRecordsRepository,
} from './app-records.repository.js';
import { requireJob, requireTraining, type OwnedJob, type OwnershipLookups } from '../shared/access.js';

export type { AppRecordRow };

/** Hidden layers the engine builds at most (src/training/legacy/brain-network.ts MAX_HIDDEN_LAYERS). */
const MAX_LAYERS = 5;
const MAX_PERCENT = 1000;

/** GET /app `type`: 0 every record of the app, 1 one record by id or job id, 2 the app's parameter templates. */
export type AppQueryType = 0 | 1 | 2;

export interface AppRecordQuery {
  type: AppQueryType;
  appName: string;
  /** The filter language (types 0 and 2); absent or empty means no condition. */
  filters?: string;
  fields: string;
  id?: number;
  jobId?: number;
  tz: string;
}

export interface NewAppRecord {
  appName: string;
  /** 0: every parameter at its default; 1: `fields` names the parameters `params` gives values for. */
  simple: 0 | 1;
  fields?: string;
  params?: string;
}

/** The network figures a trainer reports with request_type 1 (all required then, none negative). */
export interface NetworkFigures {
  neurons?: number;
  inputs?: number;
  outputs?: number;
  layersRequested?: number;
  layersCreated?: number;
}

export interface AppRunReport {
  appName: string;
  id: number;
  jobId: number;
  trainingId: number;
  status: number;
  /** 0 run state only; 1 run state plus the network figures; 2 run state of a forecast-only run. */
  requestType: 0 | 1 | 2;
  host: string;
  pid: number;
  figures: NetworkFigures;
}

/** Reads one `params` value: the value to store, or why it is refused. */
type Setter = (text: string) => { value: number | string } | { error: string };

const integer = (min: number, max: number): Setter => (text) => {
  if (!/^[-+]?\d+$/.test(text)) return { error: 'must be an integer' };
  const n = Number(text);
  return n < min || n > max ? { error: `must be between ${min} and ${max}` } : { value: n };
};
const decimal = (min: number, max: number, maxExclusive = false): Setter => (text) => {
  if (!/^[-+]?(\d+\.?\d*|\.\d+)$/.test(text)) return { error: "must be a number (decimal point '.')" };
  const n = Number(text);
  const tooBig = maxExclusive ? n >= max : n > max;
  return n < min || tooBig ? { error: `must be between ${min} and ${max}${maxExclusive ? ' (exclusive)' : ''}` } : { value: n };
};

/** ModelFamily values; '' is stored as 'auto'. */
export const MODEL_FAMILIES = ['auto', 'network'] as const;
export type ModelFamilyChoice = (typeof MODEL_FAMILIES)[number];
const modelFamily: Setter = (text) => {
  const value = text.trim().toLowerCase() || 'auto';
  return (MODEL_FAMILIES as readonly string[]).includes(value)
    ? { value }
    : { error: `must be 'auto' (or empty: every model family, chosen by backtest) or 'network' (the legacy single neural network), not '${text}'` };
};

/** The App record fields POST /app simple=1 may set, each with its own rule. */
const SETTABLE: Record<string, { column: keyof AppParameters; parse: Setter }> = {
  Job_Id: { column: 'job_id', parse: integer(0, 2_147_483_647) },
  Training_Id: { column: 'training_id', parse: integer(0, 2_147_483_647) },
  LayersRequested: { column: 'layers_requested', parse: integer(0, MAX_LAYERS) },
  LearningRate: { column: 'learning_rate', parse: decimal(0, 1, true) },
  RequestType: { column: 'request_type', parse: integer(0, 2) },
  DataRowsToConsider: { column: 'data_rows_to_consider', parse: integer(0, 2_147_483_647) },
  NoNegatives: { column: 'no_negatives', parse: integer(0, 1) },
  IncreaseMargin: { column: 'increase_margin', parse: decimal(0, MAX_PERCENT) },
  DecreaseMargin: { column: 'decrease_margin', parse: decimal(0, MAX_PERCENT) },
  DeviationTarget: { column: 'deviation_target', parse: decimal(0, MAX_PERCENT) },
  DeviatedTarget: { column: 'deviated_target', parse: decimal(0, 100) },
  ModelFamily: { column: 'model_family', parse: modelFamily },
};
const SETTABLE_COLUMNS = Object.fromEntries(Object.keys(SETTABLE).map((key) => [key, APP_RECORD_COLUMNS[key]!]));

/** Each network figure with the PUT /app parameter that carries it, which its errors name. */
const FIGURES = [
  ['neurons', 'neurons'],
  ['inputs', 'inputs'],
  ['outputs', 'outputs'],
  ['layersRequested', 'layers_requested'],
  ['layersCreated', 'layers_created'],
] as const satisfies readonly (readonly [keyof NetworkFigures, string])[];

/** Zero in a record means "the engine's default". */
const unlessZero = (n: number) => (n > 0 ? n : undefined);

/** The App record's parameters as the training engine takes them. */
export function trainingParamsOf(record: AppRecordRow | undefined): TrainingParams {
  if (!record) return {};
  return {
    layersRequested: unlessZero(record.layers_requested),
    learningRate: unlessZero(record.learning_rate),
    dataRowsToConsider: unlessZero(record.data_rows_to_consider),
    noNegatives: record.no_negatives === 1,
    increaseMargin: record.increase_margin,
    decreaseMargin: record.decrease_margin,
    deviationTarget: record.deviation_target,
    deviatedTarget: unlessZero(record.deviated_target),
    modelFamily: record.model_family === 'network' ? 'network' : 'auto',
  };
}

/** Reads `fields` and `params` of POST /app simple=1 into column values, checking each against its field's rule. */
export function parseParameters(fields: string, params: string): AppParameters {
  const names = fields.split(',').map((name) => name.trim());
  const values = params.split(',').map((value) => value.trim());
  const settable = Object.keys(SETTABLE).join(', ');
  if (names.length !== values.length) {
    throw Errors.invalidParameter('params', `expected ${names.length} comma-separated value(s), one per field, but got ${values.length}`);
  }
  const result: AppParameters = {};
  names.forEach((name, i) => {
    if (name === '*' || name === '') throw Errors.invalidParameter('fields', `name each parameter to set (${settable})`);
    // The shared parser resolves the name (exact or case-insensitive) and explains unknown ones.
    const [key] = parseFields(name, SETTABLE_COLUMNS, 'fields') as [string];
    const setter = SETTABLE[key]!;
    if (result[setter.column] !== undefined) throw Errors.invalidParameter('fields', `'${key}' is given twice`);
    const parsed = setter.parse(values[i]!);
    if ('error' in parsed) throw Errors.invalidParameter('params', `value ${i + 1} for '${key}' ${parsed.error}`);
    (result as Record<string, number | string>)[setter.column] = parsed.value;
  });
  return result;
}

/** App records of section 4.6: parameters per app or job, and the run state a trainer reports. */
export function createAppRecordsService(deps: { records: AppRecordsRepository; lookups: OwnershipLookups; clock: Clock }) {
  const { records, lookups, clock } = deps;

  async function requireRecord(caller: Caller, id: number, appName: string): Promise<AppRecordRow> {
    const record = await records.findVisible(id, ownerScope(caller));
    if (!record || record.app_name !== appName) throw Errors.notFound(`App record of app '${appName}' with id`, id);
    return record;
  }

  return {
    /** GET /app: the records and the wire fields to show of each. */
    async list(caller: Caller, query: AppRecordQuery): Promise<{ rows: AppRecordRow[]; fields: string[] }> {
      const fields = parseFields(query.fields, APP_RECORD_COLUMNS, 'fields');
      const ownerId = ownerScope(caller);
      if (query.type === 1) {
        if (!query.id && !query.jobId) throw Errors.missingParameter('id');
        const rows = await records.list({ ownerId, appName: query.appName, id: query.id || undefined, jobId: query.jobId || undefined });
        if (rows.length === 0) {
          throw query.id
            ? Errors.notFound(`App record of app '${query.appName}' with id`, query.id)
            : Errors.notFound(`App record of app '${query.appName}' for job`, query.jobId);
        }
        // By id that is the one record; by job id the newest one, which is the one the job runs with.
        return { rows: rows.slice(0, 1), fields };
      }
      const condition = filterExpression(query.filters, APP_RECORD_COLUMNS, { parameter: 'filters', tz: query.tz });
      const rows = await records.list({ ownerId, appName: query.appName, templatesOnly: query.type === 2, condition });
      return { rows, fields };
    },

    /** POST /app: answers the new record's id. */
    async create(caller: Caller, input: NewAppRecord): Promise<number> {
      let values: AppParameters = {};
      if (input.simple === 1) {
        if (input.fields === undefined) throw Errors.missingParameter('fields');
        if (input.params === undefined) throw Errors.missingParameter('params');
        values = parseParameters(input.fields, input.params);
      }
      let owner = caller.userId;
      if (values.job_id) {
        const job = await requireJob(lookups, caller, values.job_id);
        if (job.app_name !== input.appName) {
          throw Errors.invalidParameter('app_id', `job ${job.id} belongs to app '${job.app_name}', not '${input.appName}'`);
        }
        if (values.training_id && values.training_id !== job.training_id) {
          throw Errors.invalidParameter('params', `job ${job.id} runs training ${job.training_id}, not ${values.training_id}`);
        }
        values.training_id = job.training_id;
        // An administrator writing for a consumer's job writes into that consumer's records.
        owner = job.user_id;
      } else if (values.training_id) {
        owner = (await requireTraining(lookups, caller, values.training_id)).user_id;
      }
      return records.insert({ ...values, job_id: values.job_id || null, training_id: values.training_id || null, user_id: owner, app_name: input.appName }, clock.now());
    },

    /**
     * PUT /app: a trainer reports the run state (and with request_type 1 the network figures, which are
     * the training's). Names a record by `id`, or a job by `job_id`, whose newest record is updated or,
     * when the job has none yet, created.
     */
    async report(caller: Caller, input: AppRunReport): Promise<void> {
      if (input.requestType === 1) {
        for (const [figure, parameter] of FIGURES) {
          const value = input.figures[figure];
          if (value === undefined) throw Errors.missingParameter(parameter);
          if (value < 0) throw Errors.invalidParameter(parameter, 'must not be negative');
        }
      }
      let record: AppRecordRow | undefined;
      let job: OwnedJob | undefined;
      if (input.id) {
        record = await requireRecord(caller, input.id, input.appName);
        if (input.jobId && record.job_id !== input.jobId) {
          throw Errors.invalidParameter('job_id', `app record ${record.id} is not the record of job ${input.jobId}`);
        }
      } else if (input.jobId) {
        job = await requireJob(lookups, caller, input.jobId);
        if (job.app_name !== input.appName) {
          throw Errors.invalidParameter('app_name', `job ${job.id} belongs to app '${job.app_name}', not '${input.appName}'`);
        }
        record = await records.findLatestForJob(job.id);
      } else {
        throw Errors.missingParameter('id');
      }
      let trainingId = record?.training_id ?? job?.training_id ?? null;
      if (input.trainingId) {
        await requireTraining(lookups, caller, input.trainingId);
        if (job && job.training_id !== input.trainingId) {
          throw Errors.invalidParameter('training_id', `job ${job.id} runs training ${job.training_id}, not ${input.trainingId}`);
        }
        trainingId = input.trainingId;
      }
      if (input.requestType === 1 && trainingId === null) {
        throw Errors.missingParameter('training_id');
      }
      const now = clock.now();
      const state = { status: input.status, host: input.host, pid: input.pid, request_type: input.requestType };
      if (record) {
        await records.report(record.id, { ...state, ...(trainingId === null ? {} : { training_id: trainingId }) }, now);
      } else if (job) {
        await records.insert({ user_id: job.user_id, app_name: job.app_name, job_id: job.id, training_id: trainingId, ...state }, now);
      }
      if (input.requestType === 1) {
        const figures = input.figures as Required<NetworkFigures>;
        await records.setTrainingFigures(
          trainingId!,
          { neurons: figures.neurons, inputs: figures.inputs, outputs: figures.outputs, layers_requested: figures.layersRequested, layers_created: figures.layersCreated },
          now,
        );
      }
    },

    /** PATCH /app: the probability (0..1) a trainer or front end attaches to a record. */
    async setProbability(caller: Caller, input: { appName: string; id: number; probability: number }): Promise<void> {
      if (!(input.probability >= 0 && input.probability <= 1)) throw Errors.invalidParameter('probability', 'must be between 0 and 1');
      const record = await requireRecord(caller, input.id, input.appName);
      await records.setProbability(record.id, input.probability, clock.now());
    },

    /** For the runner: the parameters a job trains with (see findApplicable); {} when the job has none. */
    async paramsForJob(jobId: number): Promise<TrainingParams> {
      const job = await lookups.job(jobId, undefined);
      if (!job) throw Errors.notFound('Job', jobId);
      return trainingParamsOf(await records.findApplicable(job));
    },
  };
}

export type AppRecordsService = ReturnType<typeof createAppRecordsService>;
