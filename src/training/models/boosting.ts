/**
 * Gradient-boosted trees on the exogenous features (issue 23): the boosting candidate for tabular data, next
 * to the forest. No npm gradient-boosting library trains in Node 20 without a native build and is kept
 * (docs/benchmarks.md, session 10), so the base learner is ml-cart's CART regression tree, the forest's own
 * tree library, and the boosting around it is Friedman's: squared error for numbers, the (multinomial)
 * deviance with one Newton step per leaf for classes, shrinkage, and a seeded half of the rows per tree
 * (stochastic gradient boosting, which also quarters ml-cart's quadratic split search).
 *
 * Bounded cost: at most MAX_ROWS fit rows (an evenly spaced subset, as the forest), ROUNDS rounds of depth
 * DEPTH; the stored state is the trees as flat arrays, not ml-cart's objects.
 */
import { createRequire } from 'node:module';
import { mulberry32, shuffleInPlace } from '../prng.js';
import type { FitRows, FittedModel, ModelFamily, PredictRows, SeriesInfo } from './model.js';

const ROUNDS = 100;
const DEPTH = 3;
const SHRINKAGE = 0.1;
const SUBSAMPLE = 0.5;
/** Rows per tree at most, whatever the fit rows: ml-cart's split search is quadratic in them. */
const MAX_TREE_ROWS = 200;
/** ml-cart makes a leaf of any node with this many rows or fewer. */
const LEAF_ROWS = 3;
const MAX_ROWS = 1000;
const MIN_ROWS = 20;

/** The part of ml-cart (untyped, CommonJS) used here: a regression tree and its nodes after train(). */
interface CartNode {
  splitColumn?: number;
  splitValue?: number;
  left?: CartNode;
  right?: CartNode;
}
interface CartRegression {
  train(features: number[][], values: number[]): void;
  root: CartNode;
}
const { DecisionTreeRegression } = createRequire(import.meta.url)('ml-cart') as {
  DecisionTreeRegression: new (options: { maxDepth: number; minNumSamples: number }) => CartRegression;
};

/** One tree as parallel arrays: node i splits on column[i] < threshold[i] (left) or is a leaf (column -1). */
interface FlatTree {
  column: number[];
  threshold: number[];
  left: number[];
  right: number[];
  value: number[];
}

interface BoostingState {
  /** Scores per row: 1 for numbers and two classes (log-odds of classes[1]), else one per class. */
  scores: number;
  /** Starting score per score (mean, log-odds or log prior). */
  base: number[];
  /** Round r's tree for score s at index r * scores + s; leaf values already include the shrinkage. */
  trees: FlatTree[];
  /** Class labels by index (classifier only). */
  classes?: string[];
  features: number;
}

function sample(rows: FitRows): FitRows {
  const n = rows.time.length;
  if (n <= MAX_ROWS) return rows;
  const keep = Array.from({ length: MAX_ROWS }, (_, i) => Math.floor((i * n) / MAX_ROWS));
  return {
    time: keep.map((i) => rows.time[i] as number),
    features: keep.map((i) => rows.features[i] as number[]),
    target: keep.map((i) => (rows.target as (number | string)[])[i]) as number[] | string[],
  };
}

function flatten(root: CartNode): FlatTree {
  const tree: FlatTree = { column: [], threshold: [], left: [], right: [], value: [] };
  const visit = (node: CartNode): number => {
    const at = tree.column.length;
    const split = node.left !== undefined && node.right !== undefined && node.splitColumn !== undefined;
    tree.column.push(split ? (node.splitColumn as number) : -1);
    tree.threshold.push(split ? (node.splitValue as number) : 0);
    tree.left.push(-1);
    tree.right.push(-1);
    tree.value.push(0);
    if (split) {
      tree.left[at] = visit(node.left as CartNode);
      tree.right[at] = visit(node.right as CartNode);
    }
    return at;
  };
  visit(root);
  return tree;
}

function leafOf(tree: FlatTree, x: number[]): number {
  let node = 0;
  while ((tree.column[node] as number) >= 0) {
    node = (x[tree.column[node] as number] as number) < (tree.threshold[node] as number) ? (tree.left[node] as number) : (tree.right[node] as number);
  }
  return node;
}

/** A leaf of only (near-)certain rows has a near-zero hessian; its Newton step is capped instead of exploding. */
const MAX_STEP = 10;

/**
 * Fits one tree to the residuals of the sampled rows and sets each leaf to the Newton step
 * scale * sum(residual) / sum(hessian) of its rows, times the shrinkage (for squared error, the leaf mean).
 */
function fitTree(features: number[][], residual: number[], hessian: number[], rows: number[], scale: number): FlatTree {
  const x = rows.map((i) => features[i] as number[]);
  const r = rows.map((i) => residual[i] as number);
  const first = r[0] as number;
  // ml-cart finds no split point in constant values; a single leaf is the right tree then.
  const constant = r.every((v) => Math.abs(v - first) < 1e-12);
  let tree: FlatTree;
  if (constant) {
    tree = { column: [-1], threshold: [0], left: [-1], right: [-1], value: [0] };
  } else {
    const cart = new DecisionTreeRegression({ maxDepth: DEPTH, minNumSamples: LEAF_ROWS });
    cart.train(x, r);
    tree = flatten(cart.root);
  }
  const sumR = tree.value.map(() => 0);
  const sumH = tree.value.map(() => 0);
  rows.forEach((i, k) => {
    const leaf = leafOf(tree, x[k] as number[]);
    sumR[leaf] = (sumR[leaf] as number) + (r[k] as number);
    sumH[leaf] = (sumH[leaf] as number) + (hessian[i] as number);
  });
  tree.value = tree.value.map((_, leaf) => {
    const h = sumH[leaf] as number;
    const step = h > 1e-12 ? (scale * (sumR[leaf] as number)) / h : 0;
    return SHRINKAGE * Math.max(-MAX_STEP, Math.min(MAX_STEP, step));
  });
  return tree;
}

/** Scores of every row: base plus every tree's leaf value. */
function scoresOf(state: Pick<BoostingState, 'scores' | 'base' | 'trees'>, features: number[][]): number[][] {
  return features.map((x) => {
    const s = [...state.base];
    state.trees.forEach((tree, t) => {
      const k = t % state.scores;
      s[k] = (s[k] as number) + (tree.value[leafOf(tree, x)] as number);
    });
    return s;
  });
}

/** Class probabilities from scores: logistic for one score (two classes), softmax otherwise. */
function probabilities(score: number[]): number[] {
  if (score.length === 1) {
    const p = 1 / (1 + Math.exp(-(score[0] as number)));
    return [1 - p, p];
  }
  const top = Math.max(...score);
  const e = score.map((v) => Math.exp(v - top));
  const total = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / total);
}

/** The boosting loop shared by both kinds: `residuals` gives, per score, each row's residual and hessian. */
function boost(
  features: number[][],
  base: number[],
  seed: number,
  progress: (done: number) => void,
  residuals: (scores: number[][], k: number) => { residual: number[]; hessian: number[]; scale: number },
): FlatTree[] {
  const n = features.length;
  const random = mulberry32(seed);
  const current = features.map(() => [...base]);
  const trees: FlatTree[] = [];
  // One tree per score and round: with more scores (classes) each tree gets fewer rows, so the cost of a fit
  // (trees x rows squared) does not grow with the classes.
  const take = Math.max(LEAF_ROWS + 1, Math.round(Math.min(n * SUBSAMPLE, MAX_TREE_ROWS) / Math.sqrt(base.length)));
  for (let round = 0; round < ROUNDS; round++) {
    const rows = shuffleInPlace(
      Array.from({ length: n }, (_, i) => i),
      random,
    )
      .slice(0, take)
      .sort((a, b) => a - b);
    // Every score of a round is fitted on the same scores (before the round's trees), as Friedman's multiclass loop.
    const fitted = base.map((_, k) => {
      const { residual, hessian, scale } = residuals(current, k);
      return fitTree(features, residual, hessian, rows, scale);
    });
    fitted.forEach((tree, k) => {
      features.forEach((x, i) => {
        const s = current[i] as number[];
        s[k] = (s[k] as number) + (tree.value[leafOf(tree, x)] as number);
      });
      trees.push(tree);
    });
    progress((round + 1) / ROUNDS);
  }
  return trees;
}

const describeTrees = (state: BoostingState) => `${state.trees.length / state.scores} rounds of depth-${DEPTH} trees, shrinkage ${SHRINKAGE}`;

function reviveRegression(state: BoostingState): FittedModel<BoostingState> {
  return {
    state,
    predict: (rows: PredictRows) => scoresOf(state, rows.features).map((s) => s[0] as number),
    describe: () => `gradient-boosted trees (${describeTrees(state)}) on ${state.features} features`,
  };
}

function reviveClassifier(state: BoostingState): FittedModel<BoostingState> {
  const classes = state.classes ?? [];
  return {
    state,
    predict: (rows: PredictRows) =>
      scoresOf(state, rows.features).map((s) => {
        const p = probabilities(s);
        return classes[p.indexOf(Math.max(...p))] ?? (classes[0] as string);
      }),
    describe: () => `gradient-boosted trees classifier (${describeTrees(state)}) on ${state.features} features, ${classes.length} classes`,
  };
}

/** Tabular data only, as the forest: on series the time-aware families do better. */
const applies = (info: SeriesInfo, rows: number) => !info.timeOrdered && rows >= MIN_ROWS;
/** ml-cart's split search is quadratic in the rows of each tree (half the fit rows, at most MAX_TREE_ROWS). */
const cost = (rows: number) => 2 + 2 * (Math.min(rows * SUBSAMPLE, MAX_TREE_ROWS) / 100) ** 2;

/** The sampled fit rows and their feature count; refuses data without features. */
function prepare(rows: FitRows): { data: FitRows; features: number } {
  const features = rows.features[0]?.length ?? 0;
  if (features === 0) throw new Error('no features to split on');
  return { data: sample(rows), features };
}

export const boostingFamily: ModelFamily<BoostingState> = {
  name: 'boosting',
  kind: 'numeric',
  applies,
  cost: (_info, n) => cost(n),
  fit(rows, ctx) {
    const { data, features } = prepare(rows);
    const y = data.target as number[];
    const mean = y.reduce((a, b) => a + b, 0) / y.length;
    const ones = y.map(() => 1);
    const trees = boost(data.features, [mean], ctx.seed, (done) => ctx.progress(done), (scores) => ({
      residual: y.map((v, i) => v - ((scores[i] as number[])[0] as number)),
      hessian: ones,
      scale: 1,
    }));
    return reviveRegression({ scores: 1, base: [mean], trees, features });
  },
  revive: reviveRegression,
};

export const boostingClassifierFamily: ModelFamily<BoostingState> = {
  name: 'boosting',
  kind: 'categorical',
  applies,
  cost: (_info, n) => cost(n),
  fit(rows, ctx) {
    const { data, features } = prepare(rows);
    const labels = data.target as string[];
    const classes = [...new Set(labels)].sort();
    const index = new Map(classes.map((c, i) => [c, i]));
    const y = labels.map((c) => index.get(c) as number);
    const prior = classes.map((_, k) => y.filter((v) => v === k).length / y.length);
    // Two classes need one score (the log-odds of the second); more need one per class.
    const base = classes.length <= 2 ? [Math.log((prior[1] ?? 1e-12) / Math.max(prior[0] as number, 1e-12))] : prior.map((p) => Math.log(p));
    const scores = base.length;
    const trees = boost(data.features, base, ctx.seed, (done) => ctx.progress(done), (current, k) => {
      const target = scores === 1 ? 1 : k;
      const p = current.map((s) => (probabilities(s)[target] as number));
      return {
        residual: y.map((v, i) => (v === target ? 1 : 0) - (p[i] as number)),
        hessian: p.map((q) => q * (1 - q)),
        scale: scores === 1 ? 1 : (classes.length - 1) / classes.length,
      };
    });
    return reviveClassifier({ scores, base, trees, classes, features });
  },
  revive: reviveClassifier,
};
