import type { FitContext, FitRows } from '../../src/training/models/model.js';

/** A series as fit rows with no features, time = index. */
export const rowsOf = (series: number[]): FitRows => ({ time: series.map((_, i) => i), features: series.map(() => []), target: series });

/** The fit context of a time-ordered series with a season of `season` steps (the statistical families ignore the network's params). */
export const seasonContext = (season: number, horizon = 8): FitContext => ({
  info: { timeOrdered: true, frequency: 'other', season, yearLength: 0, horizon },
  seed: 1,
  params: { layersRequested: 0, learningRate: 0.1, epochs: 10, deviationTarget: 5 },
  featureNames: [],
  progress: () => {},
});
