import type { LlmTool, LlmToolCall } from '../../llm/provider.js';
import type { PanelReport, SelectionReport } from '../../training/index.js';
import type { Caller } from '../caller.js';
import { keyOf, parseSeriesList, pickSeries, seriesParam, type SeriesKey } from '../charts/chart-data.js';
import type { DataService } from '../data/data.service.js';
import { Errors, isAppError, type AppError } from '../errors.js';
import { JOB_STATUS, JOB_STATUS_NAMES } from '../jobs/job-status.js';
import type { JobsService } from '../jobs/jobs.service.js';
import type { JobView } from '../jobs/jobs.repository.js';
import type { ForecastsService } from '../model-records/forecasts.service.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import type { JobStatus } from '../../db/tables/jobs.js';

/** At most this many tool rounds per reply; then the model answers with what it has. */
export const MAX_TOOL_ROUNDS = 3;
/** At most this many tool calls run per reply, over all its rounds (each predict writes an output record). */
export const MAX_TOOL_CALLS = 8;
/** The result of a call past MAX_TOOL_CALLS: it is answered, as every call must be, but not run. */
export const TOO_MANY_TOOL_CALLS = JSON.stringify({ error: `At most ${MAX_TOOL_CALLS} tool calls run per reply; answer with what you have` });
/** Forecast rows one read_forecast hands to the model. */
export const MAX_FORECAST_ROWS = 50;
/** Series of a job of many whose winners one read_forecast lists when no series is named. */
export const MAX_LISTED_SERIES = 50;
/** Output rows read to find a named series' rows (the chart's bound on a forecast read). */
const MAX_SCANNED_ROWS = 10_000;
const MAX_LISTED_JOBS = 50;

const jobId = { type: 'integer', description: 'The job id, as list_jobs gives it', minimum: 1 };

/** The tools a use case with ModelTools=1 offers (OpenAI tools API, JSON-schema parameters). */
export const MODEL_TOOLS: LlmTool[] = [
  {
    name: 'list_jobs',
    description: "The chat user's own training jobs of the applications it is subscribed to, newest first: id, application, status, training and its success rate.",
    parameters: { type: 'object', properties: {}, additionalProperties: false },
  },
  {
    name: 'read_forecast',
    description:
      `A finished job's forecast rows (at most ${MAX_FORECAST_ROWS}, with 80%/95% interval columns when stored), its success rate, and chart_url: the address of its chart (PNG) to show the user. ` +
      `A job of many series (an upload keyed by columns such as store or product) also answers each series' winning model and backtest error against its best naive (series, at most ${MAX_LISTED_SERIES}); ` +
      'give `series` to narrow the rows, the winners and the chart to some of them.',
    parameters: {
      type: 'object',
      properties: {
        job_id: jobId,
        series: {
          type: 'string',
          description:
            "Jobs of many series only: which series, by key value, e.g. 'Finance'; a key of several columns joined with |, e.g. '3|A'; several separated by commas; or positions in the listed order, e.g. '51..100'",
        },
      },
      required: ['job_id'],
      additionalProperties: false,
    },
  },
  {
    name: 'predict',
    description: "Runs input values through a finished job's trained model and answers the predicted outputs.",
    parameters: {
      type: 'object',
      properties: { job_id: jobId, inputs: { type: 'object', description: 'Input column name to value', additionalProperties: { type: ['string', 'number'] } } },
      required: ['job_id', 'inputs'],
      additionalProperties: false,
    },
  },
];

export interface ModelToolsDeps {
  jobs: JobsService;
  data: DataService;
  forecasts: ForecastsService;
  /** The rule of job creation (jobs.service): a consumer uses an application only while subscribed to it. */
  subscriptions: Pick<SubscriptionsService, 'isActive'>;
  /** The chat user's account: its role decides the subscription rule, a disabled one reaches nothing. */
  users: { findById(id: number): Promise<{ role: 'admin' | 'consumer'; is_enabled: boolean } | undefined> };
  /** The address of a job's chart (charts.php, format=png; of the given series of a job of many), handed to the model with the forecast so a reply can link the picture. */
  chartUrl?: (jobId: number, series?: SeriesKey[]) => string;
}

/** Whom one reply's tool calls run for; made once per reply by `modelToolScope`. */
export interface ModelToolScope {
  /** The chat user scoped as a consumer: its own jobs only, even when it is an administrator. */
  caller: Caller;
  /** Why every call is refused (the account is gone or disabled); undefined when the user may use the tools. */
  refusal?: AppError;
  /** Whether the user may reach jobs of this application now (memoised for the reply). */
  mayUse(appName: string): Promise<boolean>;
}

/**
 * The chat user's scope, by the rules the service applies elsewhere: consumers need an active
 * subscription to an application (as to create its jobs), administrators need none; a disabled account
 * could not sign in, so its chat reaches none of its rows.
 */
export async function modelToolScope(deps: ModelToolsDeps, userId: number, clientId: number): Promise<ModelToolScope> {
  const caller: Caller = { userId, role: 'consumer', name: '', lastname: '', email: '', clientId, sessionId: 0, token: '' };
  const account = await deps.users.findById(userId);
  if (!account?.is_enabled) return { caller, refusal: Errors.userDisabled(), mayUse: async () => false };
  if (account.role === 'admin') return { caller, mayUse: async () => true };
  const known = new Map<string, Promise<boolean>>();
  const mayUse = (appName: string) => {
    let active = known.get(appName);
    if (!active) {
      // A job's app_name has no foreign key: an application since removed (isActive's parameter error)
      // counts as not subscribed; any other failure stays a failure of the tool.
      active = deps.subscriptions.isActive(userId, appName).catch((error: unknown) => {
        if (isAppError(error)) return false;
        throw error;
      });
      known.set(appName, active);
    }
    return active;
  };
  return { caller, mayUse };
}

/**
 * Runs one tool call in `scope`. Answers the JSON text fed back to the model; any refusal (someone
 * else's job, an application without an active subscription, a bad argument) is an `{error}` result,
 * never an exception, and says nothing about rows the user may not reach.
 */
export async function runModelTool(deps: ModelToolsDeps, scope: ModelToolScope, call: LlmToolCall): Promise<string> {
  try {
    if (scope.refusal) throw scope.refusal;
    return JSON.stringify(await dispatch(deps, scope, call));
  } catch (error) {
    return JSON.stringify({ error: isAppError(error) ? error.message : 'the tool failed' });
  }
}

/** A job of the chat user that its subscriptions let it use now. */
async function usableJob(deps: ModelToolsDeps, scope: ModelToolScope, id: number): Promise<JobView> {
  const job = await deps.jobs.get(scope.caller, id);
  if (!(await scope.mayUse(job.app_name))) throw Errors.jobNotSubscribed(id);
  return job;
}

async function dispatch(deps: ModelToolsDeps, scope: ModelToolScope, call: LlmToolCall): Promise<unknown> {
  let args: Record<string, unknown>;
  try {
    const parsed: unknown = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    args = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return { error: 'the arguments are not valid JSON' };
  }
  const id = Number(args.job_id);
  const needJob = () => Number.isInteger(id) && id > 0;
  switch (call.name) {
    case 'list_jobs': {
      const own = await deps.jobs.list(scope.caller, { tz: 'UTC' });
      const usable = await Promise.all(own.map((j) => scope.mayUse(j.app_name)));
      return {
        jobs: own
          .filter((_, i) => usable[i])
          .sort((a, b) => b.id - a.id)
          .slice(0, MAX_LISTED_JOBS)
          .map((j) => ({
            job_id: j.id,
            app_name: j.app_name,
            status: JOB_STATUS_NAMES[j.status as JobStatus] ?? String(j.status),
            training_id: j.training_id,
            training: j.training_description,
            success_rate: j.success_rate,
            finished_at: j.finished_at?.toISOString() ?? null,
          })),
      };
    }
    case 'read_forecast': {
      if (!needJob()) return { error: 'job_id must be a job id' };
      const job = await usableJob(deps, scope, id);
      if (job.status !== JOB_STATUS.Finished) return { error: `Job ${id} is ${JOB_STATUS_NAMES[job.status as JobStatus] ?? String(job.status)}, not Finished: it has no forecast to read` };
      const series = typeof args.series === 'string' && args.series.trim() !== '' ? args.series : undefined;
      const panel = job.selection?.panel && job.selection.panel.keys.length > 0 ? job.selection.panel : undefined;
      if (panel) return readPanelForecast(deps, scope, job, job.selection!, panel, series);
      if (series !== undefined) return { error: `Job ${id} holds one series (its upload has no key columns): leave series out` };
      const query = { jobId: id, output: 1, progress: 0, limit: 0, insight: 0, alter: 0, intervals: 1, cap: MAX_FORECAST_ROWS } as const;
      const [count] = await deps.data.rows(scope.caller, { ...query, progress: 1 });
      const rows = await deps.data.rows(scope.caller, query);
      return {
        job_id: id,
        success_rate: job.success_rate,
        ...(job.selection ? { selection: job.selection } : {}),
        total_rows: Number(count?.count ?? rows.length),
        rows: rows.slice(0, MAX_FORECAST_ROWS),
        ...(deps.chartUrl ? { chart_url: deps.chartUrl(id) } : {}),
      };
    }
    case 'predict': {
      if (!needJob()) return { error: 'job_id must be a job id' };
      await usableJob(deps, scope, id);
      const inputs = typeof args.inputs === 'object' && args.inputs !== null ? (args.inputs as Record<string, unknown>) : {};
      const cells = Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '']));
      const result = await deps.forecasts.forecast(scope.caller, { jobId: id, cells });
      return { job_id: result.jobId, training_id: result.trainingId, prediction: result.row };
    }
    default:
      return { error: `no tool named '${call.name}'` };
  }
}

/**
 * read_forecast for a job of many series (a reply that stays short however many series): the report without
 * its per-series list, then each series' winners (upload order; the named ones, or the first
 * MAX_LISTED_SERIES), and the forecast rows of the named series (or the first rows). A series is named as the
 * chart's `series=` names it.
 */
async function readPanelForecast(deps: ModelToolsDeps, scope: ModelToolScope, job: JobView, selection: SelectionReport, panel: PanelReport, asked: string | undefined) {
  const { perSeries, ...summary } = panel;
  // The report's order, the upload's: positions (series=13..24) count as the chart counts them.
  const all = perSeries.map((s) => ({ ...s, key: s.key.map((v) => v.trim()) }));
  let listed = all.slice(0, MAX_LISTED_SERIES);
  if (asked !== undefined) {
    const picked = pickSeries(
      all.map((s) => s.key),
      parseSeriesList(asked),
    );
    if (picked.unknown.length > 0) {
      const examples = all.slice(0, 3).map((s) => `'${seriesParam(s.key)}'`).join(', ');
      return { error: `${picked.unknown.map((t) => `'${t}'`).join(', ')} is not a series of job ${job.id}: its ${all.length} series are keyed by ${panel.keys.join(' | ')}, e.g. ${examples}` };
    }
    listed = picked.picked.slice(0, MAX_LISTED_SERIES).map((i) => all[i]!);
  }
  // A series' own errors are in its units (MAE) or an error rate; the report's MASE is its summary over series.
  const metricOf = (column: string) => (selection.outputs.find((o) => o.column === column)?.kind === 'categorical' ? 'error rate' : 'MAE');
  const query = { jobId: job.id, output: 1, progress: 0, limit: 0, insight: 0, alter: 0, intervals: 1 } as const;
  const [count] = await deps.data.rows(scope.caller, { ...query, progress: 1 });
  let rows = await deps.data.rows(scope.caller, { ...query, cap: asked === undefined ? MAX_FORECAST_ROWS : MAX_SCANNED_ROWS });
  if (asked !== undefined) {
    const wanted = new Set(listed.map((s) => JSON.stringify(s.key)));
    rows = rows.filter((row) => wanted.has(JSON.stringify(keyOf(row, panel.keys))));
  }
  const { panel: _panel, ...report } = selection;
  return {
    job_id: job.id,
    success_rate: job.success_rate,
    selection: { ...report, panel: summary },
    series_total: all.length,
    series: listed.map((s) => ({
      key: Object.fromEntries(panel.keys.map((k, i) => [k, s.key[i] ?? ''])),
      rows: s.rows,
      outputs: s.outputs.map((o) => ({ column: o.column, chosen: o.chosen, metric: metricOf(o.column), error: o.error, best_naive: o.baseline })),
      ...(s.note ? { note: s.note } : {}),
    })),
    ...(asked === undefined && all.length > listed.length ? { more_series: `${all.length - listed.length} more series; name some with series to read them` } : {}),
    total_rows: Number(count?.count ?? rows.length),
    ...(asked !== undefined ? { rows_of_series: rows.length } : {}),
    rows: rows.slice(0, MAX_FORECAST_ROWS),
    ...(deps.chartUrl ? { chart_url: deps.chartUrl(job.id, asked === undefined ? undefined : listed.slice(0, 12).map((s) => s.key)) } : {}),
  };
}
