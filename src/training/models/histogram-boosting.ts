/**
 * Histogram gradient boosting (LightGBM's way of finding splits) for squared error, on large numeric
 * feature matrices: the tree learner of the global model across series (global.ts).
 *
 * Why not a library: the npm registry's gradient-boosting packages were measured again for the global model (16 lag
 * features of vega-datasets' stocks, 100 rounds of depth-5 trees, shrinkage 0.1, half the rows per tree, this
 * 2-core machine at a load average of 10-13 from other work). `ml-xgboost` 1.1.2 (XGBoost 0.7 compiled to
 * WASM in 2018, its last release) takes 1.8 s on 10k rows and 10.2 s on 60k with its default exact splits;
 * with `tree_method: hist` 1.8-3.4 s on 60k rows, and 120k rows abort with "memory access out of bounds" (a
 * fixed WASM heap); it also loads only asynchronously and its memory is freed by hand. `decision-tree` 1.0.0
 * has no thresholds on continuous features (docs/benchmarks.md). This file, same runs: 60k rows
 * 2.8 s (2.0 s CPU), 120k rows 4.0 s (2.5 s CPU). And boosting.ts, the hand-written exact learner of the
 * tabular family, sorts the rows per feature at every node on number[][] rows and stops at 1,000 rows: as the
 * global model's learner it scored 1.115 of the best naive (geometric mean over 9 real panels) against 0.872
 * here, in twice the time (docs/benchmarks.md, panels). So: features binned once to at most 63 quantile
 * bins plus one bin for missing values, one histogram of gradient sums per node and feature, the larger
 * child's histogram by subtraction from its parent, depth-wise growth, an L2 penalty on leaf values,
 * shrinkage, a seeded subsample of the rows per tree, and an out-of-bag stop.
 *
 * Missing values (NaN) fall in bin 0, below every number, so a split can send them left with the small
 * values or alone; the global model uses that for lags before a series' start.
 */
import { mulberry32 } from '../core/prng.js';

export interface HistogramBoostingOptions {
  rounds: number;
  depth: number;
  shrinkage: number;
  /** Share of the rows each tree is grown on (seeded sample without replacement). */
  subsample: number;
  /** Most rows a tree is grown on, whatever the share: bounds a tree's histogram work on large inputs. */
  maxSample?: number;
  /** Fewest rows a leaf may hold. */
  minLeaf: number;
  /** L2 penalty on leaf values, in rows (a leaf of n rows shrinks its mean by n / (n + lambda)). */
  lambda: number;
  seed: number;
  /**
   * Keep only the rounds up to the best cumulative out-of-bag improvement (the rows a tree was not grown on
   * score it), and stop after `patience` rounds without a new best. 0 or absent: keep every round.
   */
  patience?: number;
  /** Share 0..1 of the fit done, after every tree. */
  progress?: (share: number) => void;
}

/** Value bins per feature, bin 0 (missing) excluded: Uint8 bins with room to spare. */
export const VALUE_BINS = 63;

/** Trees as flat arrays, node k of the model at index k: split on feature[k] (bin <= threshold[k] goes left) or a leaf (feature -1). */
export interface HistogramBoostingModel {
  features: number;
  base: number;
  /** Per feature, ascending upper bin edges: value x is in bin 1 + (number of edges < x); NaN in bin 0. */
  edges: Float64Array[];
  /** Index of each tree's root node. */
  roots: Int32Array;
  feature: Int32Array;
  threshold: Uint8Array;
  left: Int32Array;
  right: Int32Array;
  value: Float64Array;
}

function binEdges(column: Float64Array): Float64Array {
  const sorted = column.filter((v) => !Number.isNaN(v)).sort();
  if (sorted.length === 0) return new Float64Array(0);
  const distinct: number[] = [];
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) distinct.push(sorted[i] as number);
  // The last distinct value needs no edge: everything above the previous edge is the top bin.
  if (distinct.length <= VALUE_BINS) return Float64Array.from(distinct.slice(0, -1));
  const edges: number[] = [];
  for (let k = 1; k < VALUE_BINS; k++) {
    const e = sorted[Math.floor((k * sorted.length) / VALUE_BINS) - 1] as number;
    if (edges.length === 0 || e > (edges[edges.length - 1] as number)) edges.push(e);
  }
  if (edges[edges.length - 1] === sorted[sorted.length - 1]) edges.pop();
  return Float64Array.from(edges);
}

/** Bin of x: 0 for NaN, else 1 + the number of edges below x (binary search). */
export function binOf(edges: Float64Array, x: number): number {
  if (Number.isNaN(x)) return 0;
  let lo = 0;
  let hi = edges.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((edges[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo + 1;
}

/** Values of one feature sampled for its edges: at most this many rows, evenly spaced, keep the quantiles close. */
const EDGE_SAMPLE = 20_000;

/** Each feature's bin edges (from at most EDGE_SAMPLE evenly spaced rows) and every row's bins, row-major. */
function binFeatures(x: Float32Array | Float64Array, n: number, width: number, progress?: (share: number) => void): { edges: Float64Array[]; bins: Uint8Array } {
  const stride = Math.max(1, Math.floor(n / EDGE_SAMPLE));
  const edges: Float64Array[] = [];
  for (let f = 0; f < width; f++) {
    const column = new Float64Array(Math.ceil(n / stride));
    for (let i = 0, k = 0; i < n; i += stride, k++) column[k] = x[i * width + f] as number;
    edges.push(binEdges(column));
    progress?.(0);
  }
  const bins = new Uint8Array(n * width);
  for (let i = 0; i < n; i++) {
    for (let f = 0; f < width; f++) bins[i * width + f] = binOf(edges[f] as Float64Array, x[i * width + f] as number);
    // Binning 100k rows takes a few hundred ms on a busy machine: report that the fit is alive.
    if ((i & 16383) === 16383) progress?.(0);
  }
  return { edges, bins };
}

/** A node still open for a split: its rows are rows[start, end) of the tree's sample. */
interface Open {
  node: number;
  start: number;
  end: number;
  sum: number;
  hist: Float64Array;
}

/** The best split of a node: feature, bin (bins <= it go left), the left side's gradient sum and row count; feature -1 for none. */
interface Split {
  feature: number;
  bin: number;
  sum: number;
  count: number;
}

/**
 * The learner's state over one fit. Each step is a method of its own rather than a loop of one long function:
 * V8 replaced a long function's every hot loop by compiling the whole function again (15 compilations of it per
 * training), where a short method is compiled once.
 */
class TreeLearner {
  private readonly B = VALUE_BINS + 1;
  private readonly histSize: number;
  readonly current: Float64Array;
  private readonly residual: Float64Array;
  readonly nodeFeature: Int32Array;
  readonly nodeThreshold: Uint8Array;
  readonly nodeLeft: Int32Array;
  readonly nodeRight: Int32Array;
  readonly nodeValue: Float64Array;
  nodeCount = 0;
  private readonly all: Int32Array;
  private readonly rows: Int32Array;
  private readonly scratch: Int32Array;
  private readonly inBag: Uint8Array;

  constructor(
    private readonly bins: Uint8Array,
    private readonly y: Float32Array | Float64Array,
    private readonly n: number,
    private readonly width: number,
    private readonly take: number,
    capacity: number,
    base: number,
    private readonly options: HistogramBoostingOptions,
  ) {
    this.histSize = width * this.B;
    this.current = new Float64Array(n).fill(base);
    this.residual = new Float64Array(n);
    // Typed node arrays sized for full trees: the per-row traversal after every tree reads them 100k times.
    this.nodeFeature = new Int32Array(capacity).fill(-1);
    this.nodeThreshold = new Uint8Array(capacity);
    this.nodeLeft = new Int32Array(capacity).fill(-1);
    this.nodeRight = new Int32Array(capacity).fill(-1);
    this.nodeValue = new Float64Array(capacity);
    this.all = new Int32Array(n);
    for (let i = 0; i < n; i++) this.all[i] = i;
    this.rows = new Int32Array(take);
    this.scratch = new Int32Array(take);
    this.inBag = new Uint8Array(n);
  }

  /** Partial Fisher-Yates: the first `take` of a shuffled index, sorted back so the histogram scans stay in memory order; their residuals. */
  sample(random: () => number): void {
    const { all, rows, inBag, take, n, residual, y, current } = this;
    for (let i = 0; i < take; i++) {
      const j = i + Math.floor(random() * (n - i));
      const t = all[i] as number;
      all[i] = all[j] as number;
      all[j] = t;
    }
    rows.set(all.subarray(0, take));
    rows.sort();
    inBag.fill(0);
    for (let k = 0; k < take; k++) inBag[rows[k] as number] = 1;
    for (let k = 0; k < take; k++) {
      const r = rows[k] as number;
      residual[r] = (y[r] as number) - (current[r] as number);
    }
  }

  /** Gradient sums and row counts of rows[start, end), interleaved per (feature, bin): one cache line per update instead of two. */
  histogram(start: number, end: number): Float64Array {
    const { rows, residual, bins, width, B } = this;
    const hist = new Float64Array(2 * this.histSize);
    for (let k = start; k < end; k++) {
      const r = rows[k] as number;
      const rr = residual[r] as number;
      const o = r * width;
      for (let f = 0, h = 0; f < width; f++, h += 2 * B) {
        const b = h + 2 * (bins[o + f] as number);
        hist[b] = (hist[b] as number) + rr;
        hist[b + 1] = (hist[b + 1] as number) + 1;
      }
    }
    return hist;
  }

  bestSplit(open: Open): Split {
    const { minLeaf, lambda } = this.options;
    const { width, B } = this;
    const m = open.end - open.start;
    const split: Split = { feature: -1, bin: 0, sum: 0, count: 0 };
    if (m < 2 * minLeaf) return split;
    let best = 1e-12;
    const parent = (open.sum * open.sum) / (m + lambda);
    for (let f = 0; f < width; f++) {
      const h = 2 * f * B;
      let gl = 0;
      let cl = 0;
      for (let b = 0; b < B - 1; b++) {
        const cb = open.hist[h + 2 * b + 1] as number;
        if (cb === 0) continue;
        gl += open.hist[h + 2 * b] as number;
        cl += cb;
        if (cl < minLeaf) continue;
        const cr = m - cl;
        if (cr < minLeaf) break;
        const gr = open.sum - gl;
        const gain = (gl * gl) / (cl + lambda) + (gr * gr) / (cr + lambda) - parent;
        if (gain > best) {
          best = gain;
          split.feature = f;
          split.bin = b;
          split.sum = gl;
          split.count = cl;
        }
      }
    }
    return split;
  }

  /** Splits the node: a stable partition of its rows (left rows first, each side still in memory order) and its children. */
  divide(open: Open, split: Split): [Open, Open] {
    const { rows, scratch, bins, width } = this;
    let l = open.start;
    let s = 0;
    for (let k = open.start; k < open.end; k++) {
      const r = rows[k] as number;
      if ((bins[r * width + split.feature] as number) <= split.bin) rows[l++] = r;
      else scratch[s++] = r;
    }
    rows.set(scratch.subarray(0, s), l);
    const mid = open.start + split.count;
    this.nodeFeature[open.node] = split.feature;
    this.nodeThreshold[open.node] = split.bin;
    const leftNode = this.nodeCount++;
    const rightNode = this.nodeCount++;
    this.nodeLeft[open.node] = leftNode;
    this.nodeRight[open.node] = rightNode;
    const leftSmaller = split.count <= open.end - open.start - split.count;
    const small = leftSmaller ? this.histogram(open.start, mid) : this.histogram(mid, open.end);
    const large = open.hist;
    for (let k = 0; k < large.length; k++) large[k] = (large[k] as number) - (small[k] as number);
    return [
      { node: leftNode, start: open.start, end: mid, sum: split.sum, hist: leftSmaller ? small : large },
      { node: rightNode, start: mid, end: open.end, sum: open.sum - split.sum, hist: leftSmaller ? large : small },
    ];
  }

  /** Grows one tree, depth-wise, on the sampled rows, and moves their scores; its root. */
  grow(): number {
    const { rows, take, current } = this;
    const root = this.nodeCount++;
    let rootSum = 0;
    for (let k = 0; k < take; k++) rootSum += this.residual[rows[k] as number] as number;
    let level: Open[] = [{ node: root, start: 0, end: take, sum: rootSum, hist: this.histogram(0, take) }];
    const leaves: Open[] = [];
    for (let d = 0; d < this.options.depth && level.length > 0; d++) {
      const next: Open[] = [];
      for (const open of level) {
        const split = this.bestSplit(open);
        if (split.feature < 0) leaves.push(open);
        else next.push(...this.divide(open, split));
      }
      level = next;
    }
    leaves.push(...level);
    // The tree's own rows already sit in their leaves' segments; only the others need a walk down the tree.
    const { shrinkage, lambda } = this.options;
    for (const leaf of leaves) {
      const v = (shrinkage * leaf.sum) / (leaf.end - leaf.start + lambda);
      this.nodeValue[leaf.node] = v;
      for (let k = leaf.start; k < leaf.end; k++) {
        const r = rows[k] as number;
        current[r] = (current[r] as number) + v;
      }
    }
    return root;
  }

  /** Moves every row the tree was not grown on by the tree's value, so the next tree's residuals are current; their squared error before and after. */
  scoreOthers(root: number): { before: number; after: number } {
    const { n, inBag, width, bins, nodeFeature, nodeThreshold, nodeLeft, nodeRight, nodeValue, current, y } = this;
    let before = 0;
    let after = 0;
    for (let i = 0; i < n; i++) {
      if (inBag[i] === 1) continue;
      let node = root;
      const o = i * width;
      while ((nodeFeature[node] as number) >= 0) {
        node = (bins[o + (nodeFeature[node] as number)] as number) <= (nodeThreshold[node] as number) ? (nodeLeft[node] as number) : (nodeRight[node] as number);
      }
      const old = current[i] as number;
      const next = old + (nodeValue[node] as number);
      current[i] = next;
      const target = y[i] as number;
      before += (target - old) * (target - old);
      after += (target - next) * (target - next);
    }
    return { before, after };
  }
}

/**
 * Fits squared-error boosting on `x` (row-major, `n` rows of `width` features, NaN = missing) and targets `y`.
 * Deterministic for a given seed.
 */
export function fitHistogramBoosting(
  x: Float32Array | Float64Array,
  y: Float32Array | Float64Array,
  n: number,
  width: number,
  options: HistogramBoostingOptions,
): HistogramBoostingModel {
  const { rounds, depth, subsample, minLeaf } = options;
  const { edges, bins } = binFeatures(x, n, width, options.progress);

  let base = 0;
  for (let i = 0; i < n; i++) base += y[i] as number;
  base = n > 0 ? base / n : 0;

  const take = Math.max(Math.min(n, 2 * minLeaf), Math.min(Math.round(n * subsample), options.maxSample ?? Infinity));
  const learner = new TreeLearner(bins, y, n, width, take, rounds * (2 ** (depth + 1) - 1), base, options);
  const roots = new Int32Array(rounds);
  const random = mulberry32(options.seed);

  const patience = options.patience ?? 0;
  const outOfBag = patience > 0 && take < n;
  let improvement = 0;
  let bestImprovement = 0;
  let bestRounds = 0;
  let grown = 0;
  for (let round = 0; round < rounds; round++) {
    learner.sample(random);
    const root = learner.grow();
    roots[round] = root;
    const { before, after } = learner.scoreOthers(root);
    grown = round + 1;
    options.progress?.((round + 1) / rounds);
    if (!outOfBag) continue;
    improvement += (before - after) / (n - take);
    if (improvement > bestImprovement) {
      bestImprovement = improvement;
      bestRounds = grown;
    } else if (grown - bestRounds >= patience) break;
  }
  // Trees are stored in order, so the kept rounds' nodes are a prefix of the arrays.
  const kept = outOfBag ? bestRounds : grown;
  const nodes = kept < grown ? (roots[kept] as number) : learner.nodeCount;
  if (kept < grown || grown < rounds) options.progress?.(1);

  return {
    features: width,
    base,
    edges,
    roots: roots.slice(0, kept),
    feature: learner.nodeFeature.slice(0, nodes),
    threshold: learner.nodeThreshold.slice(0, nodes),
    left: learner.nodeLeft.slice(0, nodes),
    right: learner.nodeRight.slice(0, nodes),
    value: learner.nodeValue.slice(0, nodes),
  };
}

/** The model's prediction for one row of raw feature values (NaN = missing); `binned` is scratch of length `features`. */
export function predictHistogramBoosting(model: HistogramBoostingModel, row: ArrayLike<number>, binned = new Uint8Array(model.features)): number {
  for (let f = 0; f < model.features; f++) binned[f] = binOf(model.edges[f] as Float64Array, row[f] as number);
  let sum = model.base;
  const { feature, threshold, left, right, value } = model;
  for (let t = 0; t < model.roots.length; t++) {
    let node = model.roots[t] as number;
    while ((feature[node] as number) >= 0) {
      node = (binned[feature[node] as number] as number) <= (threshold[node] as number) ? (left[node] as number) : (right[node] as number);
    }
    sum += value[node] as number;
  }
  return sum;
}
