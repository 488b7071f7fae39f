/**
 * Model selection for one output column: every applicable family is fitted on each backtest split's fit
 * rows and predicts its test rows; MAE (numeric) or error rate (categorical) over all test rows ranks them.
 * The winner is the best single candidate, or, for numeric outputs, the inverse-error weighted combination
 * of the best 2 or 3 when that combination scores lower on the same backtest (the M4 lesson: simple
 * combinations are hard to beat), or the median of the best 3 when it scores lower still: the median keeps
 * the middle forecast at each step, so one member that the windows ranked well but that runs away (a trend
 * carried past a turn) does not pull the forecast with it (late flights per hour 1.05x -> 0.87x
 * the weekly naive). Naive families always compete, so the winner never scores worse than the best naive
 * baseline. Ties go to the earlier family in the registry (the simpler one).
 * Many series at once: pooledStructure chooses one structure for all of them from their mean scaled
 * backtest errors, where each series' few windows alone would rank a dozen families by noise, and pooledWinner
 * gives it to each series with its own fits; the value columns of a wide upload (pooledWinners) and the series
 * of a long panel (panel-part.ts choosePanel, between scoring every series and refitting any) both use them.
 * Some families compete only in that choice (POOLED_ONLY: auto.arima's differencing, whose d is each series' own,
 * and drift, ETS and Theta on logarithms).
 * Which families are which, this file reads by name from their traits (models/model.ts FamilyTraits).
 */
import type { Backtest } from './backtest.js';
import type { FitContext, FitRows, ModelFamily, PredictRows, SeriesInfo } from '../models/model.js';
import { namesWhere } from '../models/candidates.js';
import { medianOf, NAIVE_NAMES } from '../models/naive.js';

const MAX_COMBINED = 3;

export interface Scored {
  family: ModelFamily;
  /** Predictions per split, aligned with split.test; null when the family failed or did not apply. */
  predictions: (number | string)[][] | null;
  error: number | null;
  description: string;
  note?: string;
}

export interface Winner {
  members: { family: ModelFamily; weight: number }[];
  /** How the members' forecasts are combined: the weighted sum (default) or their median at each row. */
  combine?: 'median';
  /** Predictions per split of the winner (combined when several members). */
  predictions: (number | string)[][];
  error: number;
  description: string;
  /** A structure chosen across many series (pooledWinner): how many, and the structure as a report reads it. */
  across?: { series: number; structure: string };
}

export interface OutputData {
  rows: FitRows;
  kind: 'numeric' | 'categorical';
}

const subset = <T>(values: T[], indices: number[]) => indices.map((i) => values[i] as T);

function rowsOf(data: FitRows, indices: number[]): FitRows {
  return {
    time: subset(data.time, indices),
    features: subset(data.features, indices),
    target: subset(data.target as (number | string)[], indices) as number[] | string[],
  };
}

function predictOf(data: FitRows, indices: number[]): PredictRows {
  return { time: subset(data.time, indices), features: subset(data.features, indices) };
}

/** The actual values of each split's test rows, aligned with that split's predictions. */
export function splitActuals<T extends number | string>(backtest: Backtest, actual: readonly T[]): T[][] {
  return backtest.splits.map((split) => split.test.map((row) => actual[row] as T));
}

/** Mean absolute error (numeric) or error rate (categorical) over every split. */
export function backtestError(backtest: Backtest, actual: (number | string)[], predictions: (number | string)[][]): number {
  return splitsError(splitActuals(backtest, actual), predictions);
}

/**
 * backtestError on the actual values of each split's test rows (splitActuals): what a series scored elsewhere
 * (a part of a panel) keeps of its backtest.
 */
export function splitsError(actual: readonly (readonly (number | string)[])[], predictions: (number | string)[][]): number {
  let sum = 0;
  let count = 0;
  actual.forEach((values, s) => {
    values.forEach((a, j) => {
      const p = (predictions[s] as (number | string)[])[j] as number | string;
      sum += typeof a === 'number' ? Math.abs((p as number) - a) : p === a ? 0 : 1;
      count++;
    });
  });
  return count === 0 ? Infinity : sum / count;
}

export function scoreFamilies(
  families: ModelFamily[],
  data: FitRows,
  backtest: Backtest,
  info: SeriesInfo,
  context: (family: ModelFamily, fitRows: number) => Omit<FitContext, 'info'>,
): Scored[] {
  const actual = data.target as (number | string)[];
  return families.map((family) => {
    if (!backtest.splits.every((split) => family.applies(info, split.fit.length))) {
      return { family, predictions: null, error: null, description: family.name, note: 'does not apply to this data' };
    }
    try {
      let description = family.name;
      const predictions = backtest.splits.map((split) => {
        const fitted = family.fit(rowsOf(data, split.fit), { info, ...context(family, split.fit.length) });
        description = fitted.describe();
        const values = fitted.predict(predictOf(data, split.test)) as (number | string)[];
        if (values.some((v) => typeof v === 'number' && !Number.isFinite(v))) throw new Error('non-finite prediction');
        return values;
      });
      return { family, predictions, error: backtestError(backtest, actual, predictions), description };
    } catch (error) {
      return { family, predictions: null, error: null, description: family.name, note: `failed: ${(error as Error).message}` };
    }
  });
}

/** Errors equal to 1e-9 relative are a tie (a residual model on an exact fit scores 1e-15 lower by rounding). */
function compareErrors(a: number, b: number): number {
  return Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b)) + 1e-12 ? 0 : a - b;
}

/**
 * Exact ties (intermittent counts whose windows all start after a zero: the last value and the median both
 * forecast 0 everywhere) go to the candidate that forecasts from many rows rather than from the one last
 * row, which the windows never saw and which may be a spike (GitHub's hourly counts forecast by a last value
 * of 4 where the median's 0 was twice as close).
 */
export const ONE_ROW = namesWhere((traits) => traits.baseline === 'last');
const fromOneRow = (s: Scored) => (ONE_ROW.has(s.family.name) ? 1 : 0);

/**
 * One row's forecast of a winner's members: their median, or their weighted sum. The one rule for the
 * backtest (chooseWinner) and for a stored model (forecaster.ts predictRows), so both combine alike.
 */
export function combineRow(values: readonly number[], weights: readonly number[], combine?: 'median'): number {
  return combine === 'median' ? medianOf(values as number[]) : values.reduce((sum, value, k) => sum + (weights[k] as number) * value, 0);
}

/** Each of `splits` backtest splits' predictions of `members`, combined row by row. */
function combinedSplits(members: Pick<Scored, 'predictions'>[], splits: number, weights: readonly number[], combine?: 'median'): number[][] {
  return Array.from({ length: splits }, (_, s) => {
    const columns = members.map((member) => member.predictions?.[s] as number[]);
    return (columns[0] as number[]).map((_, j) => combineRow(columns.map((column) => column[j] as number), weights, combine));
  });
}

/**
 * The long-run level families: each forecasts a constant of the whole history (its mean, its median, or each
 * season slot's mean), whatever the series did lately.
 */
const LEVEL_NAMES = namesWhere((traits) => traits.baseline === 'level');

export interface SelectionOptions {
  /**
   * Whether the level families (LEVEL_NAMES) may be members of a combination (default true). A series of a panel
   * leaves them out: a combination's weights come from the same few windows that ranked its members,
   * and a level member that scored well in windows where the series kept still pulls the forecast back to the
   * history's level once the series has left it (unemployed by industry at the 2009 turn: Wholesale and Retail
   * Trade's combination with the season means in it scored 2.45 MASE, 0.53 without). A level family still wins
   * alone when it scores best. Measured on the 13 panels and 6 validation panels (docs/benchmarks.md, panels): mean MASE 1.460 -> 1.445
   * and 1.160 -> 1.146, no panel worse by more than 1%. One series alone keeps them (its corpus is unchanged).
   */
  levelsInCombinations?: boolean;
  /**
   * Whether a family with a test of the series of its own (ModelFamily.admits) competes only on a series that
   * passes it (default false: always): the level families only on a series the KPSS test reads as
   * level-stationary, the seasonal naives only on one whose first differences show the season (models/naive.ts
   * says why). Applied where a series' families are chosen (series-run.ts prepareSeries). A series of a panel asks
   * for it: on top of levelsInCombinations, the level families' test took unemployment rate by industry (a
   * validation panel) 2.43 -> 2.23 mean MASE, no panel of the 13 or the validation set worse (docs/benchmarks.md,
   * panels).
   */
  onlyWhereAdmitted?: boolean;
  /**
   * Whether the numeric outputs of one upload choose their winner together (pooledStructure) rather than each on
   * its own windows (default false): a wide upload's value columns, and each output column over a long panel's
   * series. A panel's plan asks for it: US employment's 21 sectors side by side 0.295 -> 0.253 mean MASE; on the
   * validation panels, unemployment rate of 14 industries side by side 2.460 -> 1.761, Seattle's four daily
   * columns 1.219 -> 1.112 (docs/benchmarks.md, panels). Over a long panel's series (a step between scoring every
   * series and refitting any: panel-part.ts choosePanel, a stage of its own in a job in parts) the 13 panels' mean
   * MASE went 1.441 -> 1.391 (8 -> 11 at or below their best naive; stocks' 5 series 1.720 -> 1.845 and US
   * population's 38 2.607 -> 2.763 the two worse) and the 6 long validation panels' 1.112 -> 1.007, none worse.
   */
  pooled?: boolean;
}

/**
 * Families that compete only in a choice across many series (pooledStructure), never in one series' own choice
 * (chooseWinner): auto.arima's differencing (models/differenced.ts) forecasts what the naive family, drift or the
 * mean already do on one series, and is worth its place only as a structure whose d each series picks for itself.
 * Where the series choose each their own (fewer than MIN_POOLED_SERIES) it would add one more candidate to rank
 * by noise: measured offline (a panels study, now in git history) as a candidate of every choice, the 13 panels' mean
 * MASE went 1.391 -> 1.415 (infant mortality's 2 series 0.188 -> 0.314, Crimean war's 3 causes 1.311 -> 1.789),
 * against 1.354 as a candidate of the choice across series only. Its AR terms (models/differenced-ar.ts) likewise.
 * Drift, ETS and Theta on logarithms (models/log-scale.ts) too: as candidates of every choice, the corpus of 67
 * single series went 0.827 -> 0.846 of the best naive and Iowa's 3 sources 2.586 -> 4.117 (three more candidates
 * ranked on 3 windows); in the choice across series alone, 21 of 35 changed panel-origins better, 0.956.
 * auto.arima's differencing on logarithms (log_differenced, log_differenced_ar) is not among them: a panel's
 * series tries it in its own choice too, where it forecasts what no family on the levels does (growth in percent
 * that fades or keeps on) and won 14 of the 22 panel-origins it changed over four origins, 0.894; the differencing
 * on the levels there lost all 6 it changed, 1.651 (docs/benchmarks.md, panels). A single-series upload never tries it.
 */
export const POOLED_ONLY = namesWhere((traits) => traits.acrossSeriesOnly === true);

/** The winner among the scored candidates (see the file's header). */
export function chooseWinner(scored: Scored[], backtest: Backtest, data: FitRows, kind: 'numeric' | 'categorical', options: SelectionOptions = {}): Winner {
  const ranked = scored
    .map((s, order) => ({ s, order }))
    .filter(({ s }) => s.error !== null && Number.isFinite(s.error) && !POOLED_ONLY.has(s.family.name))
    .sort((a, b) => compareErrors(a.s.error as number, b.s.error as number) || fromOneRow(a.s) - fromOneRow(b.s) || a.order - b.order)
    .map(({ s }) => s);
  const best = ranked[0];
  if (!best) throw new Error('no model could be fitted on this data');
  let winner: Winner = {
    members: [{ family: best.family, weight: 1 }],
    predictions: best.predictions as (number | string)[][],
    error: best.error as number,
    description: best.description,
  };
  if (kind !== 'numeric' || (best.error as number) === 0) return winner;
  const actual = data.target as number[];
  const combinable = options.levelsInCombinations === false ? ranked.filter((s) => !LEVEL_NAMES.has(s.family.name)) : ranked;
  for (let m = 2; m <= Math.min(MAX_COMBINED, combinable.length); m++) {
    const members = combinable.slice(0, m);
    const inverse = members.map((s) => 1 / (s.error as number));
    const total = inverse.reduce((a, b) => a + b, 0);
    const weights = inverse.map((w) => w / total);
    const predictions = combinedSplits(members, backtest.splits.length, weights);
    const error = backtestError(backtest, actual, predictions);
    if (compareErrors(error, winner.error) < 0) {
      winner = {
        members: members.map((s, k) => ({ family: s.family, weight: weights[k] as number })),
        predictions,
        error,
        description: `combination of ${members.map((s, k) => `${s.family.name} (${(weights[k] as number).toFixed(2)})`).join(', ')}`,
      };
    }
  }
  if (combinable.length >= MAX_COMBINED) {
    const members = combinable.slice(0, MAX_COMBINED);
    const predictions = combinedSplits(members, backtest.splits.length, [], 'median');
    const error = backtestError(backtest, actual, predictions);
    if (compareErrors(error, winner.error) < 0) {
      winner = {
        members: members.map((s) => ({ family: s.family, weight: 1 / MAX_COMBINED })),
        combine: 'median',
        predictions,
        error,
        description: `median of ${members.map((s) => s.family.name).join(', ')}`,
      };
    }
  }
  return winner;
}

/** The best-scoring naive-family candidate: the baseline reported next to the winner. */
export function bestNaive(scored: Scored[]): Scored | undefined {
  return scored
    .filter((s) => NAIVE_NAMES.has(s.family.name) && s.error !== null)
    .sort((a, b) => (a.error as number) - (b.error as number))[0];
}

/** What the pooled choice reads of one candidate: a Scored, or the same figures of one scored elsewhere. */
export type PooledCandidate = { family: Pick<ModelFamily, 'name'> } & Pick<Scored, 'predictions' | 'error'>;

/** One output of one series, as the pooled choice across many series reads it (pooledStructure). */
export interface PooledOutput {
  scored: PooledCandidate[];
  /** The actual values of each backtest split's test rows (splitActuals): the series' windows may differ. */
  actual: number[][];
  /** The output's error scale: the MAE of its one-step naive on the known values (MASE's denominator). */
  scale: number;
}

/** The structure chosen across many series: its members by family name, their weights, how they combine. */
export interface PooledStructure {
  members: string[];
  weights: number[];
  combine?: 'median';
  /** Series it was chosen across. */
  series: number;
}

/**
 * Series a pooled choice needs at least: across the 8 panels of 2 or 3 series (a panels study, now in git history) it
 * beat each series' own choice on 3 and lost on 5, by up to a third (Crimean war's 3 causes 1.31 -> 1.74 MASE).
 */
const MIN_POOLED_SERIES = 4;

/** The usable candidate of a family on one output: scored, with predictions and a finite error. */
function usableOf<T extends PooledCandidate>(scored: readonly T[], name: string): T | undefined {
  return scored.find((s) => s.family.name === name && s.predictions !== null && s.error !== null && Number.isFinite(s.error));
}

/**
 * One choice for many series at once: where each series has only a few backtest windows, its own
 * ranking of a dozen families is mostly noise, so the families are ranked by their mean scaled backtest error
 * over every series (the error over the series' own scale, as M4 and the panel report rank them) and one
 * structure is chosen for all of them: the best family alone, the inverse-error weighted combination of the
 * best 2 or 3, or the median of the best 3 (the same structures chooseWinner tries), whichever has the lowest
 * mean scaled backtest error over the series. Each series then gets that structure with its own members' fits
 * (pooledWinner). Only families that scored on every series take part; null when fewer than MIN_POOLED_SERIES
 * series or no family scored on all of them. Ties go to the simpler structure, then to the earlier family.
 */
export function pooledStructure(outputs: readonly PooledOutput[], options: SelectionOptions = {}): PooledStructure | null {
  if (outputs.length < MIN_POOLED_SERIES) return null;
  const names = (outputs[0] as PooledOutput).scored.map((s) => s.family.name);
  const common = names.filter((name, i) => names.indexOf(name) === i && outputs.every((o) => usableOf(o.scored, name) && o.scale > 0));
  if (common.length === 0) return null;
  const pooled = new Map(common.map((name) => [name, outputs.reduce((sum, o) => sum + ((usableOf(o.scored, name) as PooledCandidate).error as number) / o.scale, 0) / outputs.length]));
  const ranked = [...common].sort((a, b) => compareErrors(pooled.get(a) as number, pooled.get(b) as number) || common.indexOf(a) - common.indexOf(b));
  const combinable = options.levelsInCombinations === false ? ranked.filter((name) => !LEVEL_NAMES.has(name)) : ranked;
  const inverseWeights = (members: string[]) => {
    const inverse = members.map((name) => 1 / Math.max(pooled.get(name) as number, 1e-12));
    const total = inverse.reduce((a, b) => a + b, 0);
    return inverse.map((w) => w / total);
  };
  const series = outputs.length;
  const structures: PooledStructure[] = [{ members: ranked.slice(0, 1), weights: [1], series }];
  for (let m = 2; m <= Math.min(MAX_COMBINED, combinable.length); m++) structures.push({ members: combinable.slice(0, m), weights: inverseWeights(combinable.slice(0, m)), series });
  if (combinable.length >= MAX_COMBINED) structures.push({ members: combinable.slice(0, MAX_COMBINED), weights: combinable.slice(0, MAX_COMBINED).map(() => 1 / MAX_COMBINED), combine: 'median', series });
  const scoredStructures = structures.map((structure) => ({
    structure,
    error: outputs.reduce((sum, o) => sum + splitsError(o.actual, predictionsOf(structure, membersOf(structure, o.scored), o.actual.length)) / o.scale, 0) / outputs.length,
  }));
  return scoredStructures.reduce((best, a) => (compareErrors(a.error, best.error) < 0 ? a : best)).structure;
}

function membersOf<T extends PooledCandidate>(structure: PooledStructure, scored: readonly T[]): T[] {
  return structure.members.map((name) => {
    const member = usableOf(scored, name);
    if (!member) throw new Error(`${name}, chosen across ${structure.series} series, did not score on this one`);
    return member;
  });
}

function predictionsOf(structure: PooledStructure, members: PooledCandidate[], splits: number): number[][] {
  return members.length === 1 ? ((members[0] as PooledCandidate).predictions as number[][]) : combinedSplits(members, splits, structure.weights, structure.combine);
}

/** How a structure chosen across series reads in a report: "median of ets, theta, drift (chosen across 14 series)". */
export function describeStructure(structure: PooledStructure): string {
  const across = `chosen across ${structure.series} series`;
  if (structure.members.length === 1) return `${structure.members[0] as string} (${across})`;
  if (structure.combine === 'median') return `median of ${structure.members.join(', ')} (${across})`;
  return `combination of ${structure.members.map((name, k) => `${name} (${(structure.weights[k] as number).toFixed(2)})`).join(', ')} (${across})`;
}

/**
 * One series' winner in a structure chosen across series: its own scored members (each family's fit on this
 * series), combined as the structure says, with their backtest predictions and error on the series' windows.
 */
export function pooledWinner(structure: PooledStructure, scored: readonly Scored[], actual: number[][]): Winner {
  const members = membersOf(structure, scored);
  const predictions = predictionsOf(structure, members, actual.length);
  const across = { series: structure.series, structure: describeStructure(structure) };
  return {
    members: members.map((s, k) => ({ family: s.family, weight: structure.weights[k] as number })),
    ...(structure.combine ? { combine: structure.combine } : {}),
    predictions,
    error: splitsError(actual, predictions),
    description: members.length === 1 ? `${(members[0] as Scored).description} (chosen across ${structure.series} series)` : across.structure,
    across,
  };
}

/** pooledStructure applied to each of the series (pooledWinner); null where it answers none. */
export function pooledWinners(outputs: (PooledOutput & { scored: Scored[] })[], options: SelectionOptions = {}): Winner[] | null {
  const structure = pooledStructure(outputs, options);
  return structure ? outputs.map((o) => pooledWinner(structure, o.scored, o.actual)) : null;
}
