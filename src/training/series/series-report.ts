/**
 * What a finished series reports (series-run.ts finishSeries): each output's selection, the backtest figures of
 * the winners, the success rate and the notes on the time axis, read from the runs as they were answered.
 */
import type { Backtest } from '../selection/backtest.js';
import { laggedName, unusedInputs, type FeatureSpaceState } from '../core/features.js';
import type { CellReader } from '../core/encoder.js';
import { isEmptyCell } from '../core/values.js';
import type { WindowErrors } from '../selection/intervals.js';
import type { DriverEffect, FitRows, ModelFamily, SeriesInfo } from '../models/model.js';
import { bestNaive, type Scored, type Winner } from '../selection/selection.js';
import { rowNames, type Analysis } from '../core/series.js';
import type { OutputSelection, TrainingResult } from '../core/types.js';

export interface OutputRun {
  column: string;
  kind: 'numeric' | 'categorical';
  decimals: number;
  data: FitRows;
  scored: Scored[];
  winner: Winner;
  /** Held-out coverage of the 80/95% intervals on the backtest (numeric outputs). */
  coverage?: { p80: number; p95: number; rows: number } | null;
  /** What the report says of how the winner was answered (evidence.ts, path-guard.ts), one sentence each. */
  notes?: string[];
  /** The answered members that model known drivers, with each driver's fitted effect (a panel's report sums them up). */
  drivers?: { family: string; effects: DriverEffect[] }[];
}

/**
 * What the status record says beyond the frequency: repeated stamps and gaps on the time axis, the stated
 * inputs used through their past, and what was done with inputs a model could not take as they came (left out,
 * text among numbers, cells with no number carried forward); none: no field.
 */
export function notesOf(analysis: Analysis, info: SeriesInfo, space: FeatureSpaceState): { timeNotes?: string[] } {
  const notes = timeNotesOf(analysis, info);
  notes.push(...inputNotesOf(analysis, space));
  for (const f of space.lagged ?? []) {
    const unit = info.timeOrdered ? 'step' : 'row';
    notes.push(`input '${f.column}' is empty in every row to forecast: its value ${f.lag} ${unit}${f.lag === 1 ? '' : 's'} earlier is used (feature '${laggedName(f)}')`);
  }
  for (const column of analysis.pastInputs.filter((c) => !(space.lagged ?? []).some((f) => f.column === c))) {
    notes.push(`input '${column}' is empty in every row to forecast and has no known value: left out`);
  }
  return notes.length > 0 ? { timeNotes: notes } : {};
}

/**
 * The inputs a model could not take as they came, one sentence each, naming the rows (their dates, else their
 * row numbers) and what was done: an input empty in every row, text cells among numbers, an input left out
 * (one value, no known value, a duplicate or collinear with an earlier one), and cells with no number in the
 * known rows or the rows to forecast, which read the column's last value before them (features.ts).
 */
function inputNotesOf(analysis: Analysis, space: FeatureSpaceState): string[] {
  const notes: string[] = [];
  const used = new Set(space.numeric.map((f) => f.column));
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  /** What a cell with no number of `column` in `rows` reads. */
  const fill = (column: string, rows: number[]) => {
    const table = space.carried?.find((c) => c.column === column);
    if (!table) return `${rows.length === 1 ? 'it reads' : 'each reads'} the column's mean over the known rows`;
    const early = rows.some((i) => {
      const date = analysis.timeline[i];
      return date != null && date.toMillis() < (table.times[0] as number);
    });
    return `${rows.length === 1 ? 'it takes' : 'each takes'} the column's last value before it, carried forward${early ? " (its first value where none comes before)" : ''}`;
  };
  for (const column of analysis.absentInputs) notes.push(`input '${column}' is empty in every row: left out, forecast without it`);
  for (const t of analysis.textCells) {
    const samples = t.samples.map((x) => `'${x}'`).join(', ');
    const done = used.has(t.column) ? `; ${fill(t.column, t.rows)}` : '';
    notes.push(`input '${t.column}' has ${plural(t.rows.length, 'text cell')} among its numbers (${rowNames(analysis, t.rows)}: ${samples}): read as missing, the column kept numeric${done}`);
  }
  for (const u of unusedInputs(analysis)) {
    if (u.reason === 'constant') notes.push(`input '${u.column}' has one value (${u.value}) in every known row: not used, it cannot tell the rows apart`);
    else if (u.reason === 'no known value') notes.push(`input '${u.column}' has no number in any known row: not used`);
    else if (u.reason === 'duplicate') notes.push(`input '${u.column}' has the same values as input '${u.of}' in every row: not used, '${u.of}' is`);
    else notes.push(`input '${u.column}' moves with input '${u.of}' (correlation ${u.correlation.toFixed(4)} over the known rows): not used, '${u.of}' is`);
  }
  for (const column of used) {
    const empty = (i: number) => isEmptyCell((analysis.readers[i] as CellReader)(column));
    const known = analysis.known.filter(empty);
    if (known.length > 0) notes.push(`input '${column}' is empty in ${plural(known.length, 'known row')} (${rowNames(analysis, known)}): the rows are kept and ${fill(column, known)}`);
    const future = analysis.forecast.filter(empty);
    if (future.length > 0) {
      notes.push(`input '${column}' is empty in ${future.length} of the ${plural(analysis.forecast.length, 'row')} to forecast (${rowNames(analysis, future)}): ${fill(column, future)}`);
    }
  }
  return notes;
}

/** Repeated stamps and gaps on the time axis. */
function timeNotesOf(analysis: Analysis, info: SeriesInfo): string[] {
  if (!info.timeOrdered) return [];
  const { duplicates, missingSteps } = analysis.timeReport;
  const notes: string[] = [];
  if (duplicates > 0) notes.push(`${duplicates} repeated timestamp${duplicates === 1 ? '' : 's'}: kept the last row of each`);
  if (missingSteps > 0) notes.push(`${missingSteps} missing step${missingSteps === 1 ? '' : 's'} between known rows (gaps left as they are)`);
  return notes;
}

/** Each backtest window's errors of the winner: what its bands' widths and their held-out coverage are built from. */
export function windowErrorsOf(run: OutputRun, backtest: Backtest): WindowErrors[] {
  const actual = run.data.target as number[];
  return backtest.splits.map((split, s) => ({
    rows: split.test,
    steps: split.steps,
    errors: split.test.map((row, j) => ((run.winner.predictions[s] as number[])[j] as number) - (actual[row] as number)),
  }));
}

export function selectionOf(run: OutputRun): OutputSelection {
  const naive = bestNaive(run.scored);
  return {
    column: run.column,
    kind: run.kind,
    metric: run.kind === 'numeric' ? 'MAE' : 'error rate',
    chosen: run.winner.members.length > 1 ? 'combination' : (run.winner.members[0] as { family: ModelFamily }).family.name,
    description: run.winner.description,
    error: run.winner.error,
    baseline: { name: naive?.family.name ?? 'none', error: naive?.error ?? run.winner.error },
    candidates: run.scored.map((s) => ({
      name: s.family.name,
      description: s.description,
      error: s.error,
      ...(s.note ? { note: s.note } : {}),
    })),
    ...(run.coverage ? { intervalCoverage: { p80: run.coverage.p80, p95: run.coverage.p95, rows: run.coverage.rows } } : {}),
    ...(run.notes ? { notes: run.notes } : {}),
  };
}

/** Backtest figures of the winners (several outputs: the mean of the per-output figures). */
export function metricsOf(runs: OutputRun[], backtest: Backtest): TrainingResult['metrics'] {
  const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  const validationRows = backtest.splits.reduce((sum, s) => sum + s.test.length, 0);
  const trainingRows = runs[0]?.data.time.length ?? 0;
  const pairs = (run: OutputRun, predictions: (number | string)[][]) =>
    backtest.splits.flatMap((split, s) => split.test.map((row, j) => [(predictions[s] as (number | string)[])[j], run.data.target[row]] as [number | string, number | string]));
  const numeric = runs.filter((r) => r.kind === 'numeric');
  if (numeric.length === 0) {
    const rate = (pick: (r: OutputRun) => (number | string)[][] | null) =>
      mean(runs.map((r) => mean(pairs(r, pick(r) ?? r.winner.predictions).map(([p, a]) => (p === a ? 0 : 1)))));
    const mae = rate((r) => r.winner.predictions);
    const baselineMae = rate((r) => bestNaive(r.scored)?.predictions ?? null);
    return { mae, rmse: Math.sqrt(mae), mape: null, baselineMae, baselineRmse: Math.sqrt(baselineMae), validationRows, trainingRows };
  }
  const figures = numeric.map((r) => {
    const errors = pairs(r, r.winner.predictions).map(([p, a]) => [(p as number) - (a as number), a as number] as const);
    const naive = pairs(r, bestNaive(r.scored)?.predictions ?? r.winner.predictions).map(([p, a]) => (p as number) - (a as number));
    const pct = errors.filter(([, a]) => a !== 0).map(([e, a]) => Math.abs(e / a) * 100);
    return {
      mae: mean(errors.map(([e]) => Math.abs(e))),
      rmse: Math.sqrt(mean(errors.map(([e]) => e * e))),
      mape: pct.length > 0 ? mean(pct) : null,
      baselineMae: mean(naive.map(Math.abs)),
      baselineRmse: Math.sqrt(mean(naive.map((e) => e * e))),
    };
  });
  const mapes = figures.map((f) => f.mape).filter((m): m is number => m !== null);
  return {
    mae: mean(figures.map((f) => f.mae)),
    rmse: mean(figures.map((f) => f.rmse)),
    mape: mapes.length > 0 ? mean(mapes) : null,
    baselineMae: mean(figures.map((f) => f.baselineMae)),
    baselineRmse: mean(figures.map((f) => f.baselineRmse)),
    validationRows,
    trainingRows,
  };
}

/**
 * % of backtest predictions (row x output) within deviationTarget% of the actual (if the actual is 0: of the
 * output's range); categorical: exact class match. The documented meaning of the training's success_rate.
 */
export function successRateOf(runs: OutputRun[], backtest: Backtest, target: number): number {
  let cells = 0;
  let ok = 0;
  for (const run of runs) {
    const actual = run.data.target as (number | string)[];
    const numbers = run.kind === 'numeric' ? (actual as number[]) : [];
    const range = numbers.length > 0 ? numbers.reduce((a, b) => Math.max(a, b), -Infinity) - numbers.reduce((a, b) => Math.min(a, b), Infinity) : 0;
    backtest.splits.forEach((split, s) =>
      split.test.forEach((row, j) => {
        const p = (run.winner.predictions[s] as (number | string)[])[j] as number | string;
        const a = actual[row] as number | string;
        cells++;
        if (typeof a === 'number') {
          const reference = a !== 0 ? Math.abs(a) : range;
          if (Math.abs((p as number) - a) <= (target / 100) * reference) ok++;
        } else if (p === a) ok++;
      }),
    );
  }
  return cells === 0 ? 0 : Math.max(0, Math.min(100, Math.round((100 * ok) / cells)));
}
