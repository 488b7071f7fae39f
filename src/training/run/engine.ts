/**
 * The forecasting engine: synchronous and CPU-bound, meant to run inside a worker thread
 * (pool.ts), free of any thread/HTTP/DB concern so it can be tested and benchmarked in-process.
 *
 * trainModel():
 *  1. Reads the upload (series.ts): known rows, rows to forecast, time axis and frequency.
 *  2. ModelFamily 'network' takes the legacy path (legacy.ts): one brain.js network, as before the engine.
 *  3. Otherwise, per output column: builds the features (features.ts) and the time index, backtests every
 *     applicable family of the registry (models/candidates.ts) on the known rows only (backtest.ts: rolling
 *     origin for time-ordered data, k-fold for tabular data), selects the best single model or combination
 *     (selection.ts), refits the winners on every known row, and derives 80/95% intervals from the winner's
 *     backtest errors (intervals.ts).
 *  4. Forecasts come from predict() on the JSON round-tripped stored model (forecaster.ts), so a reload
 *     predicts identically.
 *
 * The seed is derived from the upload and the parameters unless one is given: the same upload gives the same
 * forecast. Hold-out figures (metrics, successRate) are those of the winner on the backtest rows; the
 * baseline figures are those of the best naive family on the same rows.
 */
import { createHash } from 'node:crypto';
import { withDateCache } from '../core/dates.js';
import { trainNetworkOnly } from '../legacy/legacy.js';
import { detectKeys, planPanel, runPlannedPanel, seriesPlan, type PlannedPanel } from '../panel/panel.js';
import { ProgressReporter, type EngineHooks } from '../core/progress.js';
import { analyse, inputsMissingInSeries, type Analysis } from '../core/series.js';
import { forecastSeries } from '../series/series-run.js';
import type { TrainingInput, TrainingResult } from '../core/types.js';

export { hiddenLayerWidth } from '../legacy/brain-network.js';
export { DEFAULT_LEARNING_RATE, hiddenLayerCount } from '../legacy/legacy.js';
export { MIN_KNOWN_ROWS } from '../core/series.js';
export type { EngineHooks } from '../core/progress.js';

export { DEFAULT_EPOCHS } from '../series/series-run.js';

export function trainModel(input: TrainingInput, hooks: EngineHooks = {}): TrainingResult {
  return (trainOrPlan(input, hooks, Infinity) as { kind: 'result'; result: TrainingResult }).result;
}

/**
 * Trains the upload here, or, for a panel of at least `minParts` parts, answers it planned so its
 * parts can run elsewhere (job-parts.ts).
 */
export function trainOrPlan(input: TrainingInput, hooks: EngineHooks, minParts: number, partUnits?: number): { kind: 'result'; result: TrainingResult } | { kind: 'panel'; planned: PlannedPanel } {
  return withDateCache(() => {
    const started = performance.now();
    const seed = input.params.seed !== undefined && Number.isFinite(input.params.seed) ? Math.trunc(input.params.seed) >>> 0 : seedOf(input);
    const read = readUpload(input);
    if ('analysis' in read) {
      const { analysis } = read;
      if (input.params.modelFamily === 'network') return { kind: 'result', result: trainNetworkOnly(input, analysis, hooks, seed) };
      // Several value columns side by side (a wide upload) are many series too: past one output, each column gets
      // the families a panel of that many series would.
      const outputs = analysis.columns.filter((c) => c.role === 'output').length;
      return { kind: 'result', result: forecastSeries(input, analysis, hooks, seed, outputs > 1 ? seriesPlan(outputs, outputs * analysis.known.length) : undefined) };
    }
    // Many series in one upload: each forecast on its own, with a global model across them. Where it
    // may go into parts, planning is the first PLANNING_SHARE of the bar (the runner's bar only rises).
    const inParts = minParts !== Infinity;
    const planning = inParts ? new ProgressReporter(100, hooks) : undefined;
    const preparing = PLANNING_SHARE - PLANNING_READ_SHARE - 1;
    const planned = planPanel(input, read.panel, seed, {
      ...(partUnits === undefined ? {} : { partUnits }),
      keepPrepared: !inParts,
      ...(planning ? { onPrepared: (done: number, total: number) => planning.epoch(PLANNING_READ_SHARE + 1 + (preparing * done) / total, 0) } : {}),
    });
    // A covariate some series never fill: each such series is forecast without it (series.ts), and the
    // panel's notes name them, in the plan so a run in parts says it too.
    planned.plan.notes.push(...inputsMissingInSeries(input, planned.plan.members, planned.plan.keys));
    if (planned.parts.length >= minParts) return { kind: 'panel', planned };
    return { kind: 'result', result: runPlannedPanel(planned, hooks, started) };
  });
}

/**
 * Share of the progress bar that planning a panel takes: reading the training set (its first
 * PLANNING_READ_SHARE, train.worker.ts), the upload's analysis and keys (one more), then preparing each series,
 * so the bar of a large panel moves within seconds of the start (it stood at 0 for the 10 s that 10,000 series took to read).
 */
export const PLANNING_SHARE = 10;
export const PLANNING_READ_SHARE = 3;

/**
 * The upload read once: a panel answers only its series (the whole upload's analysis is let go before each
 * series is read on its own, which on 10,000 series is half the planning's memory); else the analysis.
 */
function readUpload(input: TrainingInput): { analysis: Analysis } | { panel: NonNullable<ReturnType<typeof detectKeys>> } {
  const analysis = analyse(input);
  if (input.params.modelFamily === 'network') return { analysis };
  const panel = detectKeys(input, analysis);
  return panel ? { panel } : { analysis };
}

/** 32 bits of a hash of everything that defines the run. */
function seedOf(input: TrainingInput): number {
  const hash = createHash('sha256');
  hash.update(JSON.stringify([input.header, input.columns, input.params]));
  for (const row of input.rows) hash.update(JSON.stringify(row));
  return hash.digest().readUInt32LE(0);
}

