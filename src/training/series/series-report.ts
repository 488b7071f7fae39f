/**
 * What a finished series reports (series-run.ts finishSeries): each output's selection, the backtest figures of
 * the winners, the success rate and the notes on the time axis, read from the runs as they were answered.
 */
import type { Backtest } from '../selection/backtest.js';
import { laggedName, type FeatureSpaceState } from '../core/features.js';
import type { WindowErrors } from '../selection/intervals.js';
import type { FitRows, ModelFamily, SeriesInfo } from '../models/model.js';
import { bestNaive, type Scored, type Winner } from '../selection/selection.js';
import type { Analysis } from '../core/series.js';
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
}

/**
 * What the status record says beyond the frequency: repeated stamps and gaps on the time axis, and the stated
 * inputs used through their past; none: no field.
 */
export function notesOf(analysis: Analysis, info: SeriesInfo, space: FeatureSpaceState): { timeNotes?: string[] } {
  const notes = timeNotesOf(analysis, info);
  for (const f of space.lagged ?? []) {
    const unit = info.timeOrdered ? 'step' : 'row';
    notes.push(`input '${f.column}' is empty in every row to forecast: its value ${f.lag} ${unit}${f.lag === 1 ? '' : 's'} earlier is used (feature '${laggedName(f)}')`);
  }
  for (const column of analysis.pastInputs.filter((c) => !(space.lagged ?? []).some((f) => f.column === c))) {
    notes.push(`input '${column}' is empty in every row to forecast and has no known value: left out`);
  }
  return notes.length > 0 ? { timeNotes: notes } : {};
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
