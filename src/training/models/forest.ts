/**
 * Random forests on the exogenous features (mljs ml-random-forest, seeded): the nonlinear candidate for
 * tabular data (no time axis).
 *
 * Bounded cost: at most MAX_TREE_ROWS fit rows (an evenly spaced subset), TREES trees of depth at most MAX_DEPTH; the stored state is the library's toJSON().
 */
import { RandomForestClassifier, RandomForestRegression } from 'ml-random-forest';
import type { FittedModel, ModelFamily, PredictRows } from './model.js';
import { appliesToTables, MAX_TREE_ROWS, treeFitRows } from './tree-rows.js';

const TREES = 30;
const MAX_DEPTH = 12;

interface ForestState {
  forest: unknown;
  /** Class labels by index (classifier only). */
  classes?: string[];
  features: number;
}

const options = (seed: number, features: number) => ({
  seed: seed | 0,
  nEstimators: TREES,
  maxFeatures: Math.max(1, Math.round(features / 3)),
  replacement: false,
  useSampleBagging: true,
  noOOB: true,
  treeOptions: { maxDepth: MAX_DEPTH, minNumSamples: 3 },
});

function reviveRegression(state: ForestState): FittedModel<ForestState> {
  const forest = RandomForestRegression.load(state.forest as Parameters<typeof RandomForestRegression.load>[0]);
  return {
    state,
    predict: (rows: PredictRows) => (rows.features.length === 0 ? [] : forest.predict(rows.features)),
    describe: () => `random forest of ${TREES} trees on ${state.features} features`,
  };
}

function reviveClassifier(state: ForestState): FittedModel<ForestState> {
  const forest = RandomForestClassifier.load(state.forest as Parameters<typeof RandomForestClassifier.load>[0]);
  const classes = state.classes ?? [];
  return {
    state,
    predict: (rows: PredictRows) => (rows.features.length === 0 ? [] : forest.predict(rows.features).map((k) => classes[k] ?? (classes[0] as string))),
    describe: () => `random forest classifier of ${TREES} trees on ${state.features} features`,
  };
}

/** ml-cart's split search is quadratic in the rows. */
const cost = (rows: number) => 2 + (Math.min(rows, MAX_TREE_ROWS) / 100) ** 2 / 4;

export const forestFamily: ModelFamily<ForestState> = {
  name: 'forest',
  kind: 'numeric',
  applies: appliesToTables,
  cost: (_info, n) => cost(n),
  fit(rows, ctx) {
    const { data, features } = treeFitRows(rows);
    const forest = new RandomForestRegression(options(ctx.seed, features));
    forest.train(data.features, data.target as number[]);
    ctx.progress(1);
    return reviveRegression({ forest: JSON.parse(JSON.stringify(forest.toJSON())) as unknown, features });
  },
  revive: reviveRegression,
};

export const forestClassifierFamily: ModelFamily<ForestState> = {
  name: 'forest',
  kind: 'categorical',
  applies: appliesToTables,
  cost: (_info, n) => cost(n),
  fit(rows, ctx) {
    const { data, features } = treeFitRows(rows);
    const classes = [...new Set(data.target as string[])].sort();
    const index = new Map(classes.map((c, i) => [c, i]));
    const forest = new RandomForestClassifier(options(ctx.seed, features));
    forest.train(data.features, (data.target as string[]).map((c) => index.get(c) as number));
    ctx.progress(1);
    return reviveClassifier({ forest: JSON.parse(JSON.stringify(forest.toJSON())) as unknown, classes, features });
  },
  revive: reviveClassifier,
};
