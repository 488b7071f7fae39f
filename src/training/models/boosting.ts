/**
 * Gradient-boosted trees on the exogenous features: the boosting candidate for tabular data, next
 * to the forest. No npm gradient-boosting library trains in Node 20 without a native build and is kept
 * (docs/benchmarks.md, tabular), so this is Friedman's stochastic gradient boosting written out: squared
 * error for numbers, the (multinomial) deviance with one Newton step per leaf for classes, shrinkage, and a
 * seeded half of the rows per tree. The trees are least-squares regression trees grown here by a sorted scan
 * per feature: ml-cart's (the forest's tree library) tries every row boundary with a pass over the rows, which
 * made a tabular job 1.6-2.5x as long for the same accuracy (measured, docs/benchmarks.md).
 *
 * Bounded cost: at most MAX_TREE_ROWS fit rows (an evenly spaced subset, as the forest), ROUNDS rounds of depth
 * DEPTH; the stored state is the trees as flat arrays.
 */
import { mulberry32, shuffleInPlace } from '../core/prng.js';
import type { FittedModel, ModelFamily, PredictRows } from './model.js';
import { appliesToTables, MAX_TREE_ROWS, treeFitRows } from './tree-rows.js';

const ROUNDS = 100;
const DEPTH = 3;
const SHRINKAGE = 0.1;
const SUBSAMPLE = 0.5;
/** A node with this many rows or fewer is a leaf (ml-cart's default, as the forest's trees). */
const LEAF_ROWS = 3;

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

function leafOf(tree: FlatTree, x: number[]): number {
  let node = 0;
  while ((tree.column[node] as number) >= 0) {
    node = (x[tree.column[node] as number] as number) < (tree.threshold[node] as number) ? (tree.left[node] as number) : (tree.right[node] as number);
  }
  return node;
}

/**
 * A least-squares regression tree of depth DEPTH on rows x with residuals r: at each node the split (feature,
 * midpoint between neighbouring distinct values) with the largest drop in squared error, found by one sorted
 * scan per feature. Leaf values are set by the caller.
 */
function growTree(x: number[][], r: number[]): FlatTree {
  const tree: FlatTree = { column: [], threshold: [], left: [], right: [], value: [] };
  const width = (x[0] as number[]).length;
  const grow = (idx: number[], depth: number): number => {
    const at = tree.column.length;
    tree.column.push(-1);
    tree.threshold.push(0);
    tree.left.push(-1);
    tree.right.push(-1);
    tree.value.push(0);
    const m = idx.length;
    if (depth >= DEPTH || m <= LEAF_ROWS) return at;
    let total = 0;
    for (const i of idx) total += r[i] as number;
    const base = (total * total) / m;
    let best = 1e-12;
    let bestF = -1;
    let bestT = 0;
    for (let f = 0; f < width; f++) {
      const order = [...idx].sort((a, b) => ((x[a] as number[])[f] as number) - ((x[b] as number[])[f] as number));
      let left = 0;
      for (let k = 0; k < m - 1; k++) {
        left += r[order[k] as number] as number;
        const v = (x[order[k] as number] as number[])[f] as number;
        const next = (x[order[k + 1] as number] as number[])[f] as number;
        if (v === next) continue;
        const nl = k + 1;
        const gain = (left * left) / nl + ((total - left) * (total - left)) / (m - nl) - base;
        if (gain > best) {
          best = gain;
          bestF = f;
          bestT = (v + next) / 2;
        }
      }
    }
    if (bestF < 0) return at;
    const l = idx.filter((i) => ((x[i] as number[])[bestF] as number) < bestT);
    const rr = idx.filter((i) => ((x[i] as number[])[bestF] as number) >= bestT);
    tree.column[at] = bestF;
    tree.threshold[at] = bestT;
    tree.left[at] = grow(l, depth + 1);
    tree.right[at] = grow(rr, depth + 1);
    return at;
  };
  grow(r.map((_, i) => i), 0);
  return tree;
}

/**
 * Classes only: a leaf of (near-)certain rows has a near-zero hessian, so its Newton step in log-odds is
 * capped instead of exploding. Numbers are not capped: their steps are in the output's own units.
 */
const MAX_LOG_ODDS_STEP = 10;

/** What one score's next tree fits: residuals, hessians and how to turn a leaf's sums into its step. */
interface Gradients {
  residual: number[];
  hessian: number[];
  /** Friedman's (K - 1) / K for K > 2 classes, else 1. */
  scale: number;
  maxStep: number;
}

/**
 * Fits one tree to the residuals of the sampled rows and sets each leaf to the Newton step
 * scale * sum(residual) / sum(hessian) of its rows, times the shrinkage (for squared error, the leaf mean).
 */
function fitTree(features: number[][], { residual, hessian, scale, maxStep }: Gradients, rows: number[]): FlatTree {
  const x = rows.map((i) => features[i] as number[]);
  const r = rows.map((i) => residual[i] as number);
  const first = r[0] as number;
  // Constant residuals leave nothing to split: a single leaf.
  const constant = r.every((v) => Math.abs(v - first) < 1e-12);
  const tree: FlatTree = constant ? { column: [-1], threshold: [0], left: [-1], right: [-1], value: [0] } : growTree(x, r);
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
    return SHRINKAGE * Math.max(-maxStep, Math.min(maxStep, step));
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

/** The boosting loop shared by both kinds: `gradients` gives, per score, what its next tree fits. */
function boost(
  features: number[][],
  base: number[],
  seed: number,
  progress: (done: number) => void,
  gradients: (scores: number[][], k: number) => Gradients,
): FlatTree[] {
  const n = features.length;
  const random = mulberry32(seed);
  const current = features.map(() => [...base]);
  const trees: FlatTree[] = [];
  // One tree per score and round: with more scores (classes) each tree gets fewer rows, so that a fit's cost
  // grows more slowly than the class count.
  const take = Math.max(LEAF_ROWS + 1, Math.round((n * SUBSAMPLE) / Math.sqrt(base.length)));
  for (let round = 0; round < ROUNDS; round++) {
    const rows = shuffleInPlace(
      Array.from({ length: n }, (_, i) => i),
      random,
    )
      .slice(0, take)
      .sort((a, b) => a - b);
    // Every score of a round is fitted on the same scores (before the round's trees), as Friedman's multiclass loop.
    const fitted = base.map((_, k) => fitTree(features, gradients(current, k), rows));
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

/** Each tree sorts its rows once per feature and level, about linear in the rows; in the forest's units (measured). */
const cost = (rows: number) => 1 + Math.min(rows, MAX_TREE_ROWS) / 250;

export const boostingFamily: ModelFamily<BoostingState> = {
  name: 'boosting',
  kind: 'numeric',
  applies: appliesToTables,
  cost: (_info, n) => cost(n),
  fit(rows, ctx) {
    const { data, features } = treeFitRows(rows);
    const y = data.target as number[];
    const mean = y.reduce((a, b) => a + b, 0) / y.length;
    const ones = y.map(() => 1);
    const trees = boost(data.features, [mean], ctx.seed, (done) => ctx.progress(done), (scores) => ({
      residual: y.map((v, i) => v - ((scores[i] as number[])[0] as number)),
      hessian: ones,
      scale: 1,
      maxStep: Infinity,
    }));
    return reviveRegression({ scores: 1, base: [mean], trees, features });
  },
  revive: reviveRegression,
};

export const boostingClassifierFamily: ModelFamily<BoostingState> = {
  name: 'boosting',
  kind: 'categorical',
  applies: appliesToTables,
  cost: (_info, n) => cost(n),
  fit(rows, ctx) {
    const { data, features } = treeFitRows(rows);
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
        maxStep: MAX_LOG_ODDS_STEP,
      };
    });
    return reviveClassifier({ scores, base, trees, classes, features });
  },
  revive: reviveClassifier,
};
