/**
 * Forecast-quality benchmark (issue 10): real public data sets (datasets.ts, from the `vega-datasets` npm
 * package) forecast END TO END by a real service process, next to naive baselines (naive.ts) and library
 * models (peers.py: scikit-learn and statsmodels, with ETS, Theta, their mean and three choosers among ETS, Theta and SARIMA
 * since issue 23) fitted on the same split in the same run.
 *
 * Per data set: the CSV with the rows to forecast left empty in the output column is uploaded to a service
 * (`src/server.ts` via tsx, WORKERS=1, a fresh Postgres database from bench/support.ts): log in, POST
 * /jobs.php newTraining=1, POST /data.php (no App record: the engine's defaults, model family auto), wait for
 * status 3, GET /data.php output=1 for the forecast, GET /stat.php for the job's own account of it. Scored
 * against the truth: MAE for numeric outputs, error rate for the classification.
 *
 * Targets (issue 10): ours <= best naive and <= 1.10 x best library model on every set; Seattle within 10% of
 * linear regression; the 1,461-row daily upload (seattle) answered -> status 3 in < 30 s, the 100,000-row one
 * in < 5 min.
 *
 *   npm run bench forecast                    or   npx tsx bench/forecast/run.ts
 *   BENCH_FORECAST_LARGE=0                    skips the 100,000-row set
 *   BENCH_FORECAST_SETS=seattle,co2           runs only these sets (ids in datasets.ts)
 *   BENCH_FORECAST_FAMILY=network             posts an App record ModelFamily=network with every job: the
 *                                             legacy single network (the "before" of issue 10); the table
 *                                             then goes to bench/.out/forecast-network.md
 *   BENCH_FORECAST_PEERS=0                    skips the python peers (naive baselines only); =cached reuses
 *                                             the last run's peers when the sets and peers.py are unchanged
 *                                             (the peers are seeded: same split, same result)
 *   BENCH_PEERS_MLP_SEEDS=20                  also fits sklearn's MLP with seeds 0..19 on each time series and
 *                                             prints where the table's seed (0) falls among them
 *   BENCH_TRAINING_NICE (default 0)           TRAINING_NICE of the service: on a shared machine a niced
 *                                             thread measures the other users' load, not the engine
 * Peers (naive and library) are scored at the data's own precision (naive.ts score), like the service's forecast.
 * Prints one table and writes it as markdown to bench/.out/forecast.md (and the raw figures to
 * bench/.out/forecast.json). Each job's line also gives the service's CPU seconds over the job's wall
 * (main thread, other threads: footprint/process-cpu.ts) and the load: on a shared machine the wall moves
 * with the other users' load, the CPU seconds only with the code.
 */
import { cpuSince, describeCpu, processCpu, type ProcessCpu } from '../footprint/process-cpu.js';
import { call, startService, stopService, type BenchService } from '../service.js';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freshDatabase } from '../support.js';
import { SETS, toCsv, type ForecastSet } from './datasets.js';
import { medianOf, naiveScores, score, type Predictions } from './naive.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const OUT = join(root, 'bench', '.out');
const TZ = 'UTC';
const NICE = Number(process.env.BENCH_TRAINING_NICE ?? 0);
const LARGE = process.env.BENCH_FORECAST_LARGE !== '0';
/** App record ModelFamily of every job (BENCH_FORECAST_FAMILY, e.g. `network` for the legacy engine); unset: no App record (auto). */
const FAMILY = process.env.BENCH_FORECAST_FAMILY ?? '';
/** '0' skips the peers, 'cached' reuses the last run's when the sets and peers.py are unchanged. */
export const PEERS = process.env.BENCH_FORECAST_PEERS ?? '1';
const ONLY = process.env.BENCH_FORECAST_SETS?.split(',').filter(Boolean);
const JOB_TIMEOUT_MS = Number(process.env.BENCH_FORECAST_TIMEOUT_MS ?? 900_000);
/** Budgets (issue 10): the daily set of ~1,500 rows and the 100,000-row set, upload answered -> status 3. */
const BUDGET_MS: Record<string, number> = { seattle: 30_000, flights100k: 300_000 };
/** The three *_choice peers are the forecast of one of ets, theta and sarima, picked per series by a chooser that sees only the known rows (peers.py choices). */
export const LIBRARY_MODELS = ['linear', 'mlp', 'gbr', 'holt_winters', 'sarima', 'ets', 'theta', 'comb', 'aicc_choice', 'library_aicc_choice', 'holdout_choice'] as const;
const LIBRARY_LABEL: Record<(typeof LIBRARY_MODELS)[number], string> = {
  linear: 'sklearn linear',
  mlp: 'sklearn MLP',
  gbr: 'sklearn GB',
  holt_winters: 'Holt-Winters',
  sarima: 'SARIMA',
  ets: 'ETS (AICc)',
  theta: 'Theta',
  comb: 'ETS+Theta mean',
  aicc_choice: 'AICc choice',
  library_aicc_choice: 'libraries\' AICc choice',
  holdout_choice: 'holdout choice',
};
const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------------
// The service and its API


const jobStatus = async (service: BenchService, jobId: number) =>
  Number((await call<{ Status: string }[]>(service, 'GET', '/jobs.php', { job_id: jobId }))[0]!.Status);

interface Ours {
  predictions: Predictions;
  wallMs: number;
  /** The service's CPU seconds over wallMs (main thread, other threads: the training thread's, mostly) and the load. */
  cpu: ProcessCpu & { load: number };
  /** The engine's own account of the run (GET /jobs_progress progress=2 Explanation; empty before issue 10). */
  explanation: string;
  /** The model the engine chose for the target column; 'network' for the legacy engine (no selection report). */
  model: string;
}

/** The part of GET /jobs_progress progress=2 Stat.Selection read here (src/training/core/types.ts SelectionReport). */
interface Selection {
  outputs: { column: string; chosen: string; description: string; error: number; baseline: { name: string; error: number } }[];
}

/** Upload -> status 3 -> forecast, through the API only. */
export async function forecastThroughService(service: BenchService, set: ForecastSet): Promise<Ours> {
  const created = await call<{ job_id: number | string }>(service, 'POST', '/jobs.php', { app_name: 'forecast', newTraining: 1 });
  const jobId = Number(created.job_id);
  if (FAMILY) {
    await call(service, 'POST', '/app.php', { app_id: 'forecast', simple: 1, fields: 'Job_Id,ModelFamily', params: `${jobId},${FAMILY}` });
  }
  // Fields before the file, so the server streams the file straight into the database.
  const form = new FormData();
  form.append('session', service.session);
  form.append('tz', TZ);
  form.append('job_id', String(jobId));
  form.append('file', '1');
  form.append('Servicefile', new Blob([toCsv(set)], { type: 'text/csv' }), `${set.id}.csv`);
  await call(service, 'POST', '/data.php', {}, form);
  const cpuAtStart = await processCpu(service.child.pid!);
  const started = performance.now();
  for (const until = Date.now() + JOB_TIMEOUT_MS; ; await sleep(100)) {
    const status = await jobStatus(service, jobId);
    if (status === 3) break;
    if (status === 4 || status === 5) throw new Error(`${set.id}: job ${jobId} ended in status ${status}`);
    if (Date.now() > until) throw new Error(`${set.id}: job ${jobId} still in status ${status} after ${JOB_TIMEOUT_MS} ms`);
  }
  const wallMs = performance.now() - started;
  const cpu = cpuSince(cpuAtStart, await processCpu(service.child.pid!));
  const rows = await call<Record<string, string>[]>(service, 'GET', '/data.php', { job_id: jobId, output: 1, progress: 0 });
  if (rows.length !== set.hidden.length) throw new Error(`${set.id}: ${rows.length} forecast rows for ${set.hidden.length} empty ones`);
  // The forecast rows come back in upload order; check it on the first input column.
  const probe = set.header[0]!;
  const column = set.header.indexOf(probe);
  rows.forEach((r, k) => {
    const sent = set.rows[set.hidden[k]!]![column]!;
    if (r[probe] !== sent && Number(r[probe]) !== Number(sent))
      throw new Error(`${set.id}: forecast row ${k} has ${probe}=${r[probe]}, the row sent had ${sent}`);
  });
  const predictions = rows.map((r) => (set.task === 'regression' ? Number(r[set.target]) : String(r[set.target])));
  const progress = await call<{ Stat?: { Explanation?: string; Selection?: Selection | null } }>(service, 'GET', '/jobs_progress.php', { job_id: jobId, progress: 2 });
  const selection = progress.Stat?.Selection ?? null;
  const chosen = selection?.outputs.find((o) => o.column === set.target);
  return { predictions, wallMs, cpu, explanation: progress.Stat?.Explanation ?? '', model: chosen ? (chosen.description || chosen.chosen) : 'network' };
}

// ---------------------------------------------------------------------------------------------------------
// Peers

/** `chose`: which peer a *_choice peer picked. */
export type PeerResult = Record<string, Record<string, { pred?: Predictions; preds?: Predictions[]; seconds?: number; error?: string; chose?: string }>>;

/** Runs peers.py on `sets`; `name` names its files in bench/.out (<name>-sets.json, <name>-peers.json). */
export async function runPeers(sets: ForecastSet[], name = 'forecast'): Promise<PeerResult> {
  const file = join(OUT, `${name}-sets.json`);
  // What python sees: the rows to forecast WITHOUT their values.
  const hiddenY = (s: ForecastSet) => {
    const hidden = new Set(s.hidden);
    return s.y.map((v, i) => (hidden.has(i) ? null : v));
  };
  const input = JSON.stringify(
    sets.map((s) => ({ id: s.id, task: s.task, numeric: s.numeric, categorical: s.categorical, time: s.time, hidden: s.hidden, y: hiddenY(s), inputs: s.inputs })),
  );
  const key = createHash('sha256')
    .update(input)
    .update(readFileSync(join(here, 'peers.py')))
    .update(process.env.BENCH_PEERS_MLP_SEEDS ?? '')
    .digest('hex');
  const cache = join(OUT, `${name}-peers.json`);
  if (PEERS === 'cached' && existsSync(cache)) {
    const cached = JSON.parse(readFileSync(cache, 'utf8')) as { key: string; result: PeerResult };
    if (cached.key === key) {
      console.log(`peers: reused from bench/.out/${name}-peers.json (same sets, same peers.py)`);
      return cached.result;
    }
  }
  writeFileSync(file, input);
  const { stdout } = await run('/usr/bin/python3', [join(here, 'peers.py'), file], { cwd: root, maxBuffer: 256 * 1024 * 1024 });
  const result = JSON.parse(stdout) as PeerResult;
  writeFileSync(cache, JSON.stringify({ key, result }));
  return result;
}

// ---------------------------------------------------------------------------------------------------------

interface Row {
  set: ForecastSet;
  ours: number | null;
  oursError?: string;
  wallMs: number | null;
  model: string;
  naive: Record<string, number>;
  library: Partial<Record<(typeof LIBRARY_MODELS)[number], number>>;
  /** Fit + predict seconds of each library model (peers.py). */
  peerSeconds: Record<string, number>;
  /** sklearn's MLP scored with each seed 0..N-1 (BENCH_PEERS_MLP_SEEDS), not a peer of the table. */
  mlpSeeds?: number[];
}

export async function benchForecast() {
  const ids = (ONLY ?? Object.keys(SETS)).filter((id) => LARGE || id !== 'flights100k' || ONLY?.includes(id));
  const sets = ids.map((id) => {
    const make = SETS[id];
    if (!make) throw new Error(`unknown set '${id}'; known: ${Object.keys(SETS).join(', ')}`);
    return make();
  });
  mkdirSync(OUT, { recursive: true });
  const rows: Row[] = [];
  const raw: Record<string, unknown> = {};
  const db = await freshDatabase('bench_forecast');
  try {
    const service = await startService(db.url, { workers: 1, nice: NICE, tz: TZ });
    try {
      for (const set of sets) {
        const row: Row = { set, ours: null, wallMs: null, model: '', naive: {}, library: {}, peerSeconds: {} };
        let cpu = '';
        try {
          const ours = await forecastThroughService(service, set);
          cpu = ` (${describeCpu(ours.cpu)})`;
          row.ours = score(set, ours.predictions);
          row.wallMs = ours.wallMs;
          row.model = ours.model;
          raw[set.id] = { explanation: ours.explanation, wallMs: ours.wallMs, cpu: ours.cpu, predictions: ours.predictions, truth: set.truth };
        } catch (e) {
          row.oursError = (e as Error).message;
        }
        row.naive = naiveScores(set);
        console.log(`${set.id}: ${set.rows.length} rows, ${set.hidden.length} to forecast: ours ${row.ours ?? row.oursError} in ${((row.wallMs ?? 0) / 1000).toFixed(1)} s${cpu}`);
        rows.push(row);
      }
    } finally {
      await stopService(service);
    }
  } finally {
    await db.drop();
  }
  if (PEERS !== '0') {
    const started = performance.now();
    const peers = await runPeers(sets);
    console.log(`peers: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    for (const row of rows) {
      for (const [name, r] of Object.entries(peers[row.set.id] ?? {})) {
        if (r.seconds !== undefined) row.peerSeconds[name] = Math.round(r.seconds * 10) / 10;
        if (r.preds) row.mlpSeeds = r.preds.map((pred) => score(row.set, pred, true));
        else if (r.pred) row.library[name as (typeof LIBRARY_MODELS)[number]] = score(row.set, r.pred, true);
        else console.log(`peer ${row.set.id}/${name} failed: ${r.error}`);
      }
    }
  }
  const markdown = table(rows) + seedTable(rows);
  console.log(`\n${markdown}`);
  const suffix = FAMILY ? `-${FAMILY}` : '';
  writeFileSync(join(OUT, `forecast${suffix}.md`), `${markdown}\n`);
  writeFileSync(join(OUT, `forecast${suffix}.json`), JSON.stringify({ rows: rows.map(({ set, ...r }) => ({ id: set.id, ...r })), raw }, null, 1));
  return rows;
}

function fmt(v: number | undefined | null, task: ForecastSet['task']): string {
  if (v === undefined || v === null || !Number.isFinite(v)) return '-';
  if (task === 'classification') return `${(v * 100).toFixed(1)}%`;
  const digits = Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : Math.abs(v) >= 1 ? 2 : 3;
  return v.toFixed(digits);
}

/**
 * "Within 10% of the best library model". For an error rate 10% of a tiny count is less than one row (and of
 * zero errors is zero), so a classification may have ceil(1.1 x the library's misclassified rows) or one more
 * misclassified row than the library, whichever is larger.
 */
function withinLibrary(set: ForecastSet, ours: number, library: number): boolean {
  if (set.task === 'regression') return ours <= 1.1 * library;
  const n = set.hidden.length;
  const oursRows = Math.round(ours * n);
  const libraryRows = Math.round(library * n);
  return oursRows <= Math.max(Math.ceil(1.1 * libraryRows), libraryRows + 1);
}

function table(rows: Row[]): string {
  const head = ['data set', 'rows', 'horizon', 'ours (model)', 'best naive', ...LIBRARY_MODELS.map((m) => LIBRARY_LABEL[m]), 'ours / naive', 'ours / library', 'job wall', 'targets'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((h, i) => (i === 0 || i === 3 || i === 4 || i === head.length - 1 ? '---' : '---:')).join('|')}|`];
  for (const r of rows) {
    const task = r.set.task;
    const [naiveName, naiveValue] = Object.entries(r.naive).sort((a, b) => a[1] - b[1])[0] ?? ['-', NaN];
    const lib = Object.entries(r.library).sort((a, b) => a[1] - b[1])[0];
    const ratioNaive = r.ours !== null ? r.ours / naiveValue : NaN;
    const ratioLib = r.ours !== null && lib ? (lib[1] === 0 && r.ours === 0 ? 1 : r.ours / lib[1]) : NaN;
    const ratio = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : v === Infinity ? 'inf' : '-');
    const checks: string[] = [];
    if (r.ours !== null) {
      checks.push(r.ours <= naiveValue + 1e-12 ? 'naive ok' : 'naive MISSED');
      const rowsNote = task === 'classification' && lib ? ` (${Math.round(r.ours * r.set.hidden.length)} vs ${Math.round(lib[1] * r.set.hidden.length)} rows)` : '';
      if (lib) checks.push(withinLibrary(r.set, r.ours, lib[1]) ? `library ok${rowsNote}` : `library MISSED${rowsNote}`);
      if (r.set.id === 'seattle' && r.library.linear !== undefined) checks.push(r.ours <= 1.1 * r.library.linear ? 'linear ok' : 'linear MISSED');
      const budget = BUDGET_MS[r.set.id];
      if (budget !== undefined && r.wallMs !== null) checks.push(r.wallMs < budget ? `< ${budget / 1000} s ok` : `< ${budget / 1000} s MISSED`);
    } else checks.push(`FAILED: ${r.oursError}`);
    const metric = task === 'classification' ? 'error rate' : 'MAE';
    lines.push(
      `| ${[
        `${r.set.label} [${metric}]`,
        r.set.rows.length,
        r.set.hidden.length,
        `${fmt(r.ours, task)} (${r.model || '-'})`,
        `${naiveName} ${fmt(naiveValue, task)}`,
        ...LIBRARY_MODELS.map((m) => fmt(r.library[m], task)),
        ratio(ratioNaive),
        lib ? `${ratio(ratioLib)} (${LIBRARY_LABEL[lib[0] as (typeof LIBRARY_MODELS)[number]] ?? lib[0]})` : '-',
        r.wallMs !== null ? `${(r.wallMs / 1000).toFixed(1)} s` : '-',
        checks.join(', '),
      ].join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

/** Where the table's MLP (seed 0) falls among BENCH_PEERS_MLP_SEEDS seeds: one draw is not the model's skill. */
function seedTable(rows: Row[]): string {
  const seeded = rows.filter((r) => r.mlpSeeds && r.mlpSeeds.length > 0);
  if (seeded.length === 0) return '';
  const lines = ['', '', '| data set | sklearn MLP seeds | seed 0 (the table) | rank of seed 0 | median | min | max |', '|---|---:|---:|---:|---:|---:|---:|'];
  for (const r of seeded) {
    const scores = r.mlpSeeds as number[];
    const rank = scores.filter((v) => v < scores[0]!).length + 1;
    const f = (v: number) => fmt(v, r.set.task);
    lines.push(`| ${r.set.label} | ${scores.length} | ${f(scores[0]!)} | ${rank} | ${f(medianOf(scores))} | ${f(Math.min(...scores))} | ${f(Math.max(...scores))} |`);
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchForecast();
}
