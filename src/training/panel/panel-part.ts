/**
 * A panel's work in parts: a part is a group of series of one upload, with everything it needs to
 * forecast them on any thread of any process (its rows, the run's parameters and seed, the global model's
 * forecast and backtest predictions for each of its series). Each part runs twice: first it scores its series
 * (scorePanelPart: every candidate backtested, answered as plain data), then, once one step has read every
 * part's scores and chosen each output's structure across the panel's series (choosePanel), it
 * refits them (fitPanelPart) and answers their outcomes, which assemblePanel puts together into the job's one
 * result. Nothing here depends on where a step ran: a panel run on one thread goes through the same steps
 * (panel.ts runPlannedPanel), so the output is the same rows, in the same order, however the parts were spread.
 */
import type { CellReader } from '../core/encoder.js';
import type { EngineState } from '../series/forecaster.js';
import { runFixedEffectsRound, type FixedEffectsRun, type PanelDrivers } from '../models/fixed-effects.js';
import { GLOBAL_FAMILY_NAME, precomputedFamily, type GlobalForecastState } from '../models/global-forecast.js';
import { describeGlobalRun, runGlobalRound, type GlobalRound, type GlobalRoundRun, type GlobalSeries } from '../models/global.js';
import type { ModelFamily } from '../models/model.js';
import { backtestError, pooledStructure, pooledWinner, splitActuals, type PooledOutput, type PooledStructure, type Scored, type SelectionOptions } from '../selection/selection.js';
import { analyse, MIN_KNOWN_ROWS, type Analysis } from '../core/series.js';
import { acrossSeries, chooseWinners, finishSeries, naiveScale, outputRun, prepareSeries, scoreCandidates, WorkMeter, type OutputRun, type PreparedSeries, type ScoredRun, type SeriesPlan } from '../series/series-run.js';
import {
  TrainingError,
  type ColumnSpec,
  type PanelReport,
  type PanelSeriesReport,
  type SelectionReport,
  type TrainedModelV2,
  type TrainingInput,
  type TrainingParams,
  type TrainingResult,
} from '../core/types.js';
import { isEmptyCell, parseNumber } from '../core/values.js';

/** The global model across a panel's series, laid out (panel.ts globalTask): each round runs on its own. */
export interface GlobalTask {
  series: GlobalSeries[];
  /** One per backtest window, then the final round that forecasts the rows to forecast. */
  rounds: GlobalRound[];
  season: number;
  seed: number;
  /** Which series of the panel (and which output) each global series is. */
  entries: { index: number; column: string }[];
  /** The known drivers of each global series, where the panel has some (the fixed-effects regression reads them). */
  drivers?: PanelDrivers;
}

/** One round across the panel: the global model's (null: too small to learn across) and the fixed-effects regressions' (null: no drivers). */
export type PanelRoundRun = { global: GlobalRoundRun | null; fixedEffects: FixedEffectsRun[] | null };
/** A model fitted across the series, its rounds put together: predictions[round][global series], and its one line. */
export type AcrossSeriesResult = { name: string; predictions: number[][][]; description: string };
/** The models fitted across the panel's series that ran every round. */
export type GlobalResult = AcrossSeriesResult[];

/** One series of a part: its index in the panel, its rows (upload order) and, by output, its global series' index. */
export interface PartMember {
  index: number;
  rows: (string | null)[][];
  global?: Record<string, number>;
}

/** A group of series, forecast as one unit of work on any thread of any process. */
export interface PanelPart {
  header: string[];
  columns: ColumnSpec[];
  params: TrainingParams;
  seed: number;
  keys: string[];
  /** The panel's size, which sets each series' families and windows (panel.ts seriesPlan). */
  panel: { series: number; rows: number };
  /** Rounds of the panel's global model (0: none); the last one forecasts. */
  globalRounds: number;
  /** The global model's season (its description names it). */
  globalSeason: number;
  /** The known drivers the models across the series read (their descriptions name them); absent: none. */
  globalDrivers?: string[];
  members: PartMember[];
}

/** What the panel's tables need of one output's selection on one series. */
export interface RunSummary {
  column: string;
  kind: 'numeric' | 'categorical';
  /** MAE of the series' one-step naive on its known rows (the MASE scale); 1 for categorical outputs. */
  scale: number;
  winner: string;
  winnerError: number;
  /** The winner's structure where it was chosen across the panel's series (selection.ts describeStructure). */
  across?: string;
  scored: { name: string; error: number | null; note?: string; description?: string }[];
  /** The answered members that model known drivers, with their fitted effects (OutputRun.drivers). */
  drivers?: OutputRun['drivers'];
}

/** One candidate of one output as a part scored it: what the choice across series and the series' refit read. */
export interface ScoredCandidate {
  name: string;
  error: number | null;
  /** Predictions per backtest split; null when the family failed or did not apply. */
  predictions: (number | string)[][] | null;
  description: string;
  note?: string;
  /** The global model's candidate: its forecast of the rows to forecast (GlobalForecastState less the description). */
  forecast?: { first: number; values: number[] };
}

/** One output of one series as a part scored it. */
export interface ScoredOutput {
  column: string;
  kind: 'numeric' | 'categorical';
  /** MAE of the series' one-step naive on its known values (the choice's scale); 0 for a categorical output. */
  scale: number;
  /** The actual values of each backtest split's test rows (its windows are the series' own). */
  actual: (number | string)[][];
  candidates: ScoredCandidate[];
}

/** One series as a part scored it (a score part's answer is one per member, in member order). */
export interface SeriesScores {
  index: number;
  /** Whether its windows roll along a time axis: only such series choose together. */
  timeOrdered: boolean;
  /** Null for a series too short for a model (its outcome is a fallback). */
  outputs: ScoredOutput[] | null;
}

/** The choice across a panel's series, per numeric output column: one structure for all, or none (each its own winner). */
export interface PanelChoice {
  columns: { column: string; structure: PooledStructure | null }[];
}

/** One series' result as plain data: its forecast rows (row indices within the series) and its report. */
export interface SeriesOutcome {
  index: number;
  knownRows: number;
  note?: string;
  forecasts: TrainingResult['forecasts'];
  /** The series' own model; null for a series too short for one (then `carried`). */
  engine: EngineState | null;
  carried?: Record<string, string>;
  /** A series with no model: the output columns it was asked for. */
  outputs?: string[];
  fit?: {
    selection: Pick<SelectionReport, 'scheme' | 'windows' | 'horizon' | 'frequency' | 'season' | 'periods' | 'timeNotes'> & { outputs: PanelSeriesReport['outputs'] };
    metrics: TrainingResult['metrics'];
    successRate: number;
    figures: TrainingResult['figures'];
    runs: RunSummary[];
  };
}

/** A panel's shared part, written once: its keys, its series' rows in the upload, the notes, the seed. */
export interface PanelPlan {
  /** The upload's header: the output's columns. */
  header: string[];
  keys: string[];
  keySource: PanelReport['keySource'];
  params: TrainingParams;
  seed: number;
  members: { key: string[]; rows: number[] }[];
  notes: string[];
  /** Outcomes decided while planning (series too short for a model). */
  outcomes: SeriesOutcome[];
  readMs: number;
}

/** Round r of the models across a panel's series (the global model, the fixed-effects regressions), with its share of the progress bar. */
export function runGlobalTaskRound(task: GlobalTask, r: number, progress?: (share: number) => void): PanelRoundRun {
  const round = task.rounds[r] as GlobalRound;
  const final = r === task.rounds.length - 1;
  const global = runGlobalRound(task.series, round, r, { season: task.season, seed: task.seed, final, ...(task.drivers ? { drivers: task.drivers } : {}), ...(progress ? { progress } : {}) });
  const fixedEffects = task.drivers ? runFixedEffectsRound(task.series, task.drivers, round, final) : null;
  return { global, fixedEffects };
}

/** The rounds' runs put together: each model that ran every round (the global model learns only across enough rows). */
export function globalResult(season: number, runs: PanelRoundRun[], drivers: string[] = []): GlobalResult {
  const result: GlobalResult = [];
  const done = runs.flatMap((r) => (r.global ? [r.global] : []));
  if (done.length > 0 && done.length === runs.length) {
    result.push({ name: GLOBAL_FAMILY_NAME, predictions: done.map((g) => g.predictions), description: describeGlobalRun(done.map((g) => g.trained), season, drivers) });
  }
  for (const name of new Set(runs.flatMap((r) => r.fixedEffects?.map((f) => f.name) ?? []))) {
    const each = runs.map((r) => r.fixedEffects?.find((f) => f.name === name));
    if (each.length === 0 || each.some((f) => f === undefined)) continue;
    const done = each as FixedEffectsRun[];
    // The final round's fit is the one that forecasts: its slopes are the ones to report.
    result.push({ name, predictions: done.map((f) => f.predictions), description: (done[done.length - 1] as FixedEffectsRun).description });
  }
  return result;
}

/** The input of one series: the panel's columns with the keys set aside, and the series' own rows. */
export function seriesInput(header: string[], columns: ColumnSpec[], params: TrainingParams, keys: string[], rows: (string | null)[][]): TrainingInput {
  return { header, columns: columns.map((c) => (keys.includes(c.name) ? { ...c, role: 'ignore' } : c)), rows, params };
}

/** A series read and prepared, or why it has no model (then its outcome is decided at once). */
export type PreparedMember = { prep: PreparedSeries; knownRows: number } | { prep: null; knownRows: number; note: string };

export function prepareMember(sub: TrainingInput, seed: number, plan: SeriesPlan): PreparedMember {
  let analysis: Analysis;
  try {
    analysis = analyse(sub);
  } catch (error) {
    if (!(error instanceof TrainingError) || error.code !== 'invalid_input') throw error;
    const outputs = sub.columns.filter((c) => c.role === 'output');
    const knownRows = sub.rows.filter((row) => outputs.some((c) => !isEmptyCell(row[sub.header.indexOf(c.name)]))).length;
    return { prep: null, knownRows, note: knownRows === 0 ? 'no known value: not forecast' : `too short for a model (${knownRows} known rows, ${MIN_KNOWN_ROWS} needed): its last known value carried forward` };
  }
  try {
    return { prep: prepareSeries(sub, analysis, seed, plan), knownRows: analysis.known.length };
  } catch (error) {
    if (!(error instanceof TrainingError) || error.code !== 'invalid_input') throw error;
    return { prep: null, knownRows: analysis.known.length, note: `too short for a model (${error.message}): its last known value carried forward` };
  }
}

/** A series with no model: its rows to forecast take its last known value (empty with no known value). */
export function fallbackOutcome(index: number, sub: TrainingInput, knownRows: number, note: string): SeriesOutcome {
  const outputs = sub.columns.filter((c) => c.role === 'output');
  const at = new Map(sub.header.map((h, i) => [h, i]));
  const carried: Record<string, string> = {};
  for (const c of outputs) {
    const i = at.get(c.name) as number;
    for (let r = sub.rows.length - 1; r >= 0; r--) {
      const cell = (sub.rows[r] as (string | null)[])[i];
      if (!isEmptyCell(cell)) {
        carried[c.name] = String(cell).trim();
        break;
      }
    }
  }
  const forecasts: TrainingResult['forecasts'] = [];
  sub.rows.forEach((row, r) => {
    if (!outputs.every((c) => isEmptyCell(row[at.get(c.name) as number]))) return;
    const values: Record<string, string> = {};
    sub.header.forEach((h, i) => (values[h] = row[i] ?? ''));
    for (const c of outputs) values[c.name] = carried[c.name] ?? '';
    forecasts.push({ rowIndex: r, values });
  });
  return { index, knownRows, note, forecasts, engine: null, carried, outputs: outputs.map((c) => c.name) };
}

/**
 * A model across the series as one series' candidate for one output, scored on the series' own backtest windows,
 * with its forecast of the rows to forecast: none when its predictions do not cover every window or are not finite.
 */
function globalScored(prep: PreparedSeries, column: string, s: number, rounds: number, global: AcrossSeriesResult): { scored: Scored; forecast: ScoredCandidate['forecast'] } | null {
  const splits = prep.backtest.splits;
  const predictions = splits.map((_, k) => (global.predictions[rounds - 1 - splits.length + k] as number[][])[s] as number[]);
  if (predictions.some((p, k) => p.length !== (splits[k] as { test: number[] }).test.length || p.some((v) => !Number.isFinite(v)))) return null;
  const futureTimes = prep.placement.targets.map((t) => t.time);
  const values = (global.predictions[rounds - 1] as number[][])[s] as number[];
  if (values.length !== futureTimes.length || values.some((v) => !Number.isFinite(v))) return null;
  const forecast = { first: futureTimes[0] ?? prep.placement.series.lastTime + 1, values: stepValues(futureTimes, values) };
  const state: GlobalForecastState = { ...forecast, description: global.description };
  const actual = prep.analysis.known.map((i) => parseNumber((prep.analysis.readers[i] as CellReader)(column)) as number);
  return { scored: { family: precomputedFamily(global.name, state), predictions, error: backtestError(prep.backtest, actual, predictions), description: global.description }, forecast };
}

/** Forecasts at possibly uneven future times as one value per step from the first (gaps take the previous value). */
function stepValues(times: number[], values: number[]): number[] {
  if (times.length === 0) return values;
  const first = times[0] as number;
  const out: number[] = [];
  times.forEach((t, k) => {
    const at = Math.round(t - first);
    while (out.length < at) out.push(out.length > 0 ? (out[out.length - 1] as number) : (values[k] as number));
    out[at] = values[k] as number;
  });
  return out;
}

function outcomeOf(index: number, knownRows: number, result: TrainingResult, runs: OutputRun[]): SeriesOutcome {
  const selection = result.selection as SelectionReport;
  // What the guard and the weak-evidence rule said of an output reaches the panel's report in the series' note.
  const said = [...(selection.timeNotes ?? []), ...selection.outputs.flatMap((o) => (o.notes ?? []).map((note) => `${o.column}: ${note}`))];
  return {
    index,
    knownRows,
    forecasts: result.forecasts,
    engine: (result.model as TrainedModelV2).engine as EngineState,
    fit: {
      selection: {
        scheme: selection.scheme,
        windows: selection.windows,
        horizon: selection.horizon,
        frequency: selection.frequency,
        season: selection.season,
        periods: selection.periods,
        ...(said.length > 0 ? { timeNotes: said } : {}),
        outputs: selection.outputs.map((o) => ({ column: o.column, chosen: o.chosen, error: o.error, baseline: o.baseline })),
      },
      metrics: result.metrics,
      successRate: result.successRate,
      figures: result.figures,
      runs: runs.map((run) => ({
        column: run.column,
        kind: run.kind,
        scale: run.kind === 'numeric' ? naiveScale(run.data.target as number[]) || 1 : 1,
        winner: run.winner.members.length > 1 ? 'combination' : (run.winner.members[0] as { family: ModelFamily }).family.name,
        winnerError: run.winner.error,
        ...(run.winner.across ? { across: run.winner.across.structure } : {}),
        ...(run.drivers ? { drivers: run.drivers } : {}),
        // A model across the series that reads the drivers says what it fitted once for all of them (the fixed effects' common slopes).
        scored: run.scored.map((s) => ({ name: s.family.name, error: s.error, ...(s.note ? { note: s.note } : {}), ...(s.family.traits?.tried === 'panel' && s.family.traits.readsDrivers ? { description: s.description } : {}) })),
      })),
    },
  };
}

/** The work units of a part's series (its progress bar), read once they are prepared. */
export const partCost = (prepared: PreparedMember[]) => prepared.reduce((s, m) => s + (m.prep?.cost ?? 0), 0);

/** A part's series read and prepared (or taken as the caller prepared them: one-thread runs), and its progress bar. */
function preparePart(part: PanelPart, plan: SeriesPlan, meter: WorkMeter | ((cost: number) => WorkMeter), prepared: Map<number, PreparedMember> | undefined) {
  const inputs = part.members.map((m) => seriesInput(part.header, part.columns, part.params, part.keys, m.rows));
  const members = part.members.map((m, k) => prepared?.get(m.index) ?? prepareMember(inputs[k] as TrainingInput, part.seed, plan));
  return { inputs, members, work: typeof meter === 'function' ? meter(partCost(members)) : meter };
}

/** Whether an output of a scored series takes part in the choice across the panel's series. */
const choosesTogether = (series: SeriesScores, output: ScoredOutput) => series.timeOrdered && output.kind === 'numeric';

/**
 * Scores every series of a part: each backtests its families and the global model's candidate. The answer is
 * plain data, one entry per member, for choosePanel and then fitPanelPart. `prepared` holds series already
 * prepared by the caller (one-thread runs).
 */
export function scorePanelPart(
  part: PanelPart,
  plan: SeriesPlan,
  meter: WorkMeter | ((cost: number) => WorkMeter),
  options: { prepared?: Map<number, PreparedMember>; clock?: { backtestMs: number; fitMs: number }; global: GlobalResult | null },
): SeriesScores[] {
  const { prepared, clock, global } = options;
  const { members, work } = preparePart(part, plan, meter, prepared);
  const scores = part.members.map((m, k): SeriesScores => {
    const prep = (members[k] as PreparedMember).prep;
    if (!prep) return { index: m.index, timeOrdered: false, outputs: null };
    const scoring = performance.now();
    const forecasts = new Map<string, Map<string, ScoredCandidate['forecast']>>();
    const runs = scoreCandidates(prep, work, (column) => {
      const s = m.global?.[column];
      if (s === undefined || !global) return [];
      const byName = new Map<string, ScoredCandidate['forecast']>();
      forecasts.set(column, byName);
      return global.flatMap((model) => {
        const scored = globalScored(prep, column, s, part.globalRounds, model);
        if (!scored) return [];
        byName.set(model.name, scored.forecast);
        return [scored.scored];
      });
    });
    if (clock) clock.backtestMs += performance.now() - scoring;
    return { index: m.index, timeOrdered: prep.placement.info.timeOrdered, outputs: runs.map((run) => scoredOutputOf(prep, run, forecasts.get(run.column))) };
  });
  if (typeof meter === 'function') work.finish();
  return scores;
}

function scoredOutputOf(prep: PreparedSeries, run: ScoredRun, forecasts: Map<string, ScoredCandidate['forecast']> | undefined): ScoredOutput {
  const target = run.data.target as (number | string)[];
  return {
    column: run.column,
    kind: run.kind,
    scale: run.kind === 'numeric' ? naiveScale(target as number[]) : 0,
    actual: splitActuals(prep.backtest, target),
    candidates: run.scored.map((s) => ({
      name: s.family.name,
      error: s.error,
      predictions: s.predictions,
      description: s.description,
      ...(s.note ? { note: s.note } : {}),
      ...(forecasts?.has(s.family.name) ? { forecast: forecasts.get(s.family.name) } : {}),
    })),
  };
}

/**
 * The choice across a panel's series, from every part's scores in part order: per numeric output
 * column, the structure selection.ts pooledStructure chooses over the series that have a model and windows on a
 * time axis (none: each series keeps its own winner). Reads the scores one series at a time and keeps only
 * what the choice needs (candidates' names, errors and backtest predictions, the actual values, the scale).
 */
export function choosePanel(scores: Iterable<SeriesScores>, selection: SelectionOptions): PanelChoice {
  if (!selection.pooled) return { columns: [] };
  const byColumn = new Map<string, PooledOutput[]>();
  for (const series of scores) {
    for (const output of series.outputs ?? []) {
      if (!choosesTogether(series, output)) continue;
      let outputs = byColumn.get(output.column);
      if (!outputs) byColumn.set(output.column, (outputs = []));
      outputs.push({ scored: output.candidates.map((c) => ({ family: { name: c.name }, error: c.error, predictions: c.predictions })), actual: output.actual as number[][], scale: output.scale });
    }
  }
  return { columns: [...byColumn].map(([column, outputs]) => ({ column, structure: pooledStructure(outputs, selection) })) };
}

/** A scored candidate as the series' selection holds it: its family from the series' plan (a model across the series' from its forecast). */
function scoredOf(candidate: ScoredCandidate, families: ModelFamily[]): Scored {
  const { name, forecast, ...figures } = candidate;
  const family = forecast ? precomputedFamily(name, { ...forecast, description: candidate.description }) : families.find((f) => f.name === name);
  if (!family) throw new Error(`candidate ${name} is not a family of this series' plan`);
  return { family, ...figures };
}

/**
 * Refits every series of a part with its scores (scorePanelPart's answer for the same part) and the panel's
 * choice: each output takes the structure chosen across the series where there is one, else its own winner;
 * then each series refits, forecasts and reports.
 */
export function fitPanelPart(
  part: PanelPart,
  scores: SeriesScores[],
  choice: PanelChoice,
  plan: SeriesPlan,
  meter: WorkMeter | ((cost: number) => WorkMeter),
  options: { prepared?: Map<number, PreparedMember>; clock?: { backtestMs: number; fitMs: number } } = {},
): SeriesOutcome[] {
  const { prepared, clock } = options;
  const started = performance.now();
  const { inputs, members, work } = preparePart(part, plan, meter, prepared);
  const structures = new Map(choice.columns.map((c) => [c.column, c.structure]));
  const outcomes = part.members.map((m, k) => {
    const member = members[k] as PreparedMember;
    if (!member.prep) return fallbackOutcome(m.index, inputs[k] as TrainingInput, member.knownRows, member.note);
    const prep = member.prep;
    const series = scores[k];
    if (series?.index !== m.index || !series.outputs) throw new Error(`series ${m.index} of the panel has no scores`);
    const outputs = series.outputs;
    const fitting = performance.now();
    const scoredRuns = prep.plan.map(({ col, families }): ScoredRun => {
      const output = outputs.find((o) => o.column === col.name);
      if (!output) throw new Error(`series ${m.index} has no scores for ${col.name}`);
      return { ...outputRun(prep, col), scored: output.candidates.map((c) => scoredOf(c, families)) };
    });
    const runs = chooseWinners(prep, scoredRuns).map((run) => {
      const output = outputs.find((o) => o.column === run.column) as ScoredOutput;
      const structure = structures.get(run.column);
      return structure && choosesTogether(series, output) ? acrossSeries(run, pooledWinner(structure, run.scored, output.actual as number[][])) : run;
    });
    const finished = finishSeries(prep, runs, work, started);
    if (clock) clock.fitMs += performance.now() - fitting;
    return outcomeOf(m.index, member.knownRows, finished.result, finished.runs);
  });
  if (typeof meter === 'function') work.finish();
  return outcomes;
}
