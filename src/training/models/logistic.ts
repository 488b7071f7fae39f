/**
 * Multinomial logistic regression with an L2 penalty (family 'logistic', categorical outputs), the same
 * model as scikit-learn's LogisticRegression() default: softmax over one linear score per class, objective
 *   sum_i -log p(y_i | x_i) + 1/(2C) ||W||^2   (intercepts not penalised, C = 1),
 * minimised by L-BFGS (deterministic: no randomness anywhere). The features come standardised from the
 * engine (numeric inputs) or as one-hot columns, as scikit-learn users are told to prepare them.
 *
 * Why not a library: the one maintained npm package for it, ml-logistic-regression 2.0.0, trains one-vs-all
 * binary models by plain gradient ascent with a fixed 50,000 steps and an unscaled step size, without an
 * intercept or any penalty: slow (50,000 passes over the data per class), unstable on more rows than its
 * step size suits, and unbounded weights on separable data. The objective here is small and convex, so a
 * textbook L-BFGS (Nocedal & Wright, algorithm 7.4, with a backtracking Armijo line search) is enough.
 */
import type { FitContext, FitRows, FittedModel, ModelFamily, PredictRows } from './model.js';

/** Inverse penalty strength, as scikit-learn's default C. */
export const INVERSE_PENALTY = 1;
const MAX_ITERATIONS = 300;
const MEMORY = 10;
/** Stop when the largest gradient component (of the objective divided by n) is below this. */
const TOLERANCE = 1e-6;

export interface LogisticState {
  classes: string[];
  features: number;
  /** weights[k] = [w_k1 .. w_kp, b_k] */
  weights: number[][];
  iterations: number;
}

/** Scores of one row for every class (linear part, before the softmax). */
function scores(weights: number[][], x: number[], p: number): number[] {
  return weights.map((w) => {
    let z = w[p] as number;
    for (let j = 0; j < p; j++) z += (w[j] as number) * (x[j] as number);
    return z;
  });
}

function argmax(values: number[]): number {
  let best = 0;
  for (let j = 1; j < values.length; j++) if ((values[j] as number) > (values[best] as number)) best = j;
  return best;
}

function revive(state: LogisticState): FittedModel<LogisticState> {
  return {
    state,
    predict(rows: PredictRows) {
      if (state.classes.length === 1) return rows.time.map(() => state.classes[0] as string);
      return rows.features.map((x) => state.classes[argmax(scores(state.weights, x, state.features))] as string);
    },
    describe: () =>
      `multinomial logistic regression (L2, C=${INVERSE_PENALTY}) on ${state.features} features, ${state.classes.length} classes`,
  };
}

/**
 * Objective (divided by n) and its gradient at theta (K blocks of p weights + 1 intercept).
 */
function objective(theta: Float64Array, x: number[][], y: Int32Array, k: number, p: number, lambda: number, grad: Float64Array): number {
  const n = x.length;
  const width = p + 1;
  grad.fill(0);
  let loss = 0;
  const z = new Float64Array(k);
  for (let i = 0; i < n; i++) {
    const row = x[i] as number[];
    let max = -Infinity;
    for (let c = 0; c < k; c++) {
      let s = theta[c * width + p] as number;
      for (let j = 0; j < p; j++) s += (theta[c * width + j] as number) * (row[j] as number);
      z[c] = s;
      if (s > max) max = s;
    }
    let sum = 0;
    for (let c = 0; c < k; c++) sum += Math.exp((z[c] as number) - max);
    const logSum = max + Math.log(sum);
    const label = y[i] as number;
    loss += logSum - (z[label] as number);
    for (let c = 0; c < k; c++) {
      const residual = Math.exp((z[c] as number) - logSum) - (c === label ? 1 : 0);
      if (residual === 0) continue;
      const base = c * width;
      for (let j = 0; j < p; j++) grad[base + j] = (grad[base + j] as number) + residual * (row[j] as number);
      grad[base + p] = (grad[base + p] as number) + residual;
    }
  }
  let penalty = 0;
  for (let c = 0; c < k; c++) {
    for (let j = 0; j < p; j++) {
      const idx = c * width + j;
      const w = theta[idx] as number;
      penalty += w * w;
      grad[idx] = (grad[idx] as number) + lambda * w;
    }
  }
  for (let idx = 0; idx < grad.length; idx++) grad[idx] = (grad[idx] as number) / n;
  return (loss + 0.5 * lambda * penalty) / n;
}

const dot = (a: Float64Array, b: Float64Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
};
const maxAbs = (a: Float64Array) => a.reduce((m, v) => Math.max(m, Math.abs(v)), 0);

/** L-BFGS on f; answers the minimiser and the iterations used. */
function lbfgs(f: (theta: Float64Array, grad: Float64Array) => number, size: number, progress: (share: number) => void): { theta: Float64Array; iterations: number } {
  let theta = new Float64Array(size);
  let grad = new Float64Array(size);
  let value = f(theta, grad);
  const ss: Float64Array[] = [];
  const ys: Float64Array[] = [];
  const rhos: number[] = [];
  let iterations = 0;
  while (iterations < MAX_ITERATIONS && maxAbs(grad) > TOLERANCE) {
    iterations++;
    // Two-loop recursion: direction = -H grad.
    const q = Float64Array.from(grad);
    const alphas: number[] = [];
    for (let m = ss.length - 1; m >= 0; m--) {
      const alpha = (rhos[m] as number) * dot(ss[m] as Float64Array, q);
      alphas[m] = alpha;
      const y = ys[m] as Float64Array;
      for (let i = 0; i < size; i++) q[i] = (q[i] as number) - alpha * (y[i] as number);
    }
    const last = ss.length - 1;
    const gamma = last >= 0 ? dot(ss[last] as Float64Array, ys[last] as Float64Array) / dot(ys[last] as Float64Array, ys[last] as Float64Array) : 1 / Math.max(1, maxAbs(grad));
    for (let i = 0; i < size; i++) q[i] = (q[i] as number) * gamma;
    for (let m = 0; m < ss.length; m++) {
      const beta = (rhos[m] as number) * dot(ys[m] as Float64Array, q);
      const s = ss[m] as Float64Array;
      for (let i = 0; i < size; i++) q[i] = (q[i] as number) + s[i]! * ((alphas[m] as number) - beta);
    }
    let direction = q.map((v) => -v);
    let slope = dot(grad, direction);
    if (!(slope < 0)) {
      // Not a descent direction (numerical trouble): restart from steepest descent.
      ss.length = 0;
      ys.length = 0;
      rhos.length = 0;
      direction = grad.map((v) => -v / Math.max(1, maxAbs(grad)));
      slope = dot(grad, direction);
    }
    // Backtracking line search (Armijo).
    let step = 1;
    const next = new Float64Array(size);
    const nextGrad = new Float64Array(size);
    let nextValue = Infinity;
    for (let tries = 0; tries < 40; tries++) {
      for (let i = 0; i < size; i++) next[i] = (theta[i] as number) + step * (direction[i] as number);
      nextValue = f(next, nextGrad);
      if (nextValue <= value + 1e-4 * step * slope) break;
      step /= 2;
    }
    if (!(nextValue < value)) break;
    const s = next.map((v, i) => v - (theta[i] as number));
    const y = nextGrad.map((v, i) => v - (grad[i] as number));
    const sy = dot(s, y);
    if (sy > 1e-12) {
      ss.push(s);
      ys.push(y);
      rhos.push(1 / sy);
      if (ss.length > MEMORY) {
        ss.shift();
        ys.shift();
        rhos.shift();
      }
    }
    const improvement = value - nextValue;
    theta = next;
    grad = nextGrad;
    value = nextValue;
    progress(iterations / MAX_ITERATIONS);
    if (improvement <= 1e-12 * Math.max(1, Math.abs(value))) break;
  }
  return { theta, iterations };
}

function fitLogistic(rows: FitRows, ctx: FitContext): FittedModel<LogisticState> {
  const labels = rows.target as string[];
  const p = rows.features[0]?.length ?? 0;
  if (rows.features.some((r) => r.length !== p)) throw new Error('feature rows differ in width');
  const classes = [...new Set(labels)].sort();
  if (classes.length === 0) throw new Error('no rows');
  ctx.progress(0);
  if (classes.length === 1) {
    ctx.progress(1);
    return revive({ classes, features: p, weights: [new Array<number>(p + 1).fill(0)], iterations: 0 });
  }
  const index = new Map(classes.map((c, j) => [c, j]));
  const y = Int32Array.from(labels, (l) => index.get(l) as number);
  const k = classes.length;
  const lambda = 1 / INVERSE_PENALTY;
  const { theta, iterations } = lbfgs((t, g) => objective(t, rows.features, y, k, p, lambda, g), k * (p + 1), (share) => ctx.progress(share));
  const weights = classes.map((_, c) => Array.from(theta.subarray(c * (p + 1), (c + 1) * (p + 1))));
  ctx.progress(1);
  return revive({ classes, features: p, weights, iterations });
}

export const logisticFamily: ModelFamily<LogisticState> = {
  name: 'logistic',
  kind: 'categorical',
  applies: (_info, rows) => rows >= 5,
  cost: (_info, rows) => 1 + rows / 2_000,
  fit: fitLogistic,
  revive,
};
