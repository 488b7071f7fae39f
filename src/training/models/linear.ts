/**
 * Ridge regression on engineered terms: a linear trend in time, season dummies (time mod season), the
 * exogenous features, and, in the `linear_ar` variant, lags of the output (1, 2 and the season) where the
 * series is regular. Multi-step forecasts fill the lags recursively with the model's own predictions, row by
 * row in time order, using each future row's own features.
 *
 * Columns are standardised; the penalty is chosen per fit by generalised cross-validation over a fixed grid,
 * from one symmetric eigendecomposition of X'X (ml-matrix), so the fit costs O(n p^2) however many
 * penalties are tried and stays fast on 100k-row uploads.
 */
import { EigenvalueDecomposition, Matrix, solve } from 'ml-matrix';
import type { FitContext, FitRows, FittedModel, ModelFamily, PredictRows, SeriesInfo } from './model.js';

const PENALTIES = [1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1];
/** A series is regular when at least this share of consecutive fitted times are one step apart. */
const REGULAR_SHARE = 0.9;

interface LinearState {
  trend: boolean;
  /** Season dummies for slots 1..season-1 (slot 0 is the intercept's), 0 = none. */
  season: number;
  lags: number[];
  featureCount: number;
  t0: number;
  tScale: number;
  means: number[];
  sds: number[];
  beta: number[];
  intercept: number;
  penalty: number;
  lastTime: number;
  /** (time, value) of the last fitted rows, enough for every lag. */
  history: [number, number][];
  featureNames: string[];
}

const slotOf = (t: number, s: number) => ((Math.round(t) % s) + s) % s;

function isRegular(time: number[]): boolean {
  let ones = 0;
  for (let i = 1; i < time.length; i++) if ((time[i] as number) - (time[i - 1] as number) === 1) ones++;
  return time.length > 1 && ones / (time.length - 1) >= REGULAR_SHARE;
}

function chooseLags(info: SeriesInfo, rows: number): number[] {
  const lags = info.season > 1 ? [1, 2, info.season] : [1, 2];
  return rows >= Math.max(...lags) + 12 ? lags : [];
}

/** Raw (unstandardised) terms of one row. */
function terms(state: Pick<LinearState, 'trend' | 'season' | 'lags' | 't0' | 'tScale'>, t: number, features: number[], lagValues: number[]): number[] {
  const x: number[] = [];
  if (state.trend) x.push((t - state.t0) / state.tScale);
  if (state.season > 1) {
    const slot = slotOf(t, state.season);
    for (let k = 1; k < state.season; k++) x.push(slot === k ? 1 : 0);
  }
  for (const f of features) x.push(f);
  for (const v of lagValues) x.push(v);
  return x;
}

function lagValuesAt(values: Map<number, number>, t: number, lags: number[]): number[] | null {
  const out: number[] = [];
  for (const lag of lags) {
    const v = values.get(t - lag);
    if (v === undefined) return null;
    out.push(v);
  }
  return out;
}

/** Ridge regression of y on the rows' terms, columns standardised, the penalty by generalised cross-validation. */
export function fitRidge(x: number[][], y: number[]): { beta: number[]; intercept: number; means: number[]; sds: number[]; penalty: number } {
  const n = x.length;
  const p = x[0]?.length ?? 0;
  const means = new Array<number>(p).fill(0);
  const sds = new Array<number>(p).fill(0);
  for (const row of x) for (let j = 0; j < p; j++) means[j] = (means[j] as number) + (row[j] as number) / n;
  for (const row of x) for (let j = 0; j < p; j++) sds[j] = (sds[j] as number) + ((row[j] as number) - (means[j] as number)) ** 2 / n;
  for (let j = 0; j < p; j++) sds[j] = Math.sqrt(sds[j] as number) > 1e-12 ? Math.sqrt(sds[j] as number) : 0;
  const yMean = y.reduce((a, b) => a + b, 0) / n;
  if (p === 0) return { beta: [], intercept: yMean, means, sds, penalty: 0 };
  // G = Z'Z and b = Z'y on standardised columns (constant columns are all zero and get a zero weight).
  const g = Array.from({ length: p }, () => new Float64Array(p));
  const b = new Float64Array(p);
  const z = new Float64Array(p);
  let yy = 0;
  for (let i = 0; i < n; i++) {
    const row = x[i] as number[];
    for (let j = 0; j < p; j++) z[j] = (sds[j] as number) > 0 ? ((row[j] as number) - (means[j] as number)) / (sds[j] as number) : 0;
    const yc = (y[i] as number) - yMean;
    yy += yc * yc;
    for (let j = 0; j < p; j++) {
      const zj = z[j] as number;
      if (zj === 0) continue;
      b[j] = (b[j] as number) + zj * yc;
      const gj = g[j] as Float64Array;
      for (let k = j; k < p; k++) gj[k] = (gj[k] as number) + zj * (z[k] as number);
    }
  }
  for (let j = 0; j < p; j++) for (let k = 0; k < j; k++) (g[j] as Float64Array)[k] = (g[k] as Float64Array)[j] as number;
  const eig = new EigenvalueDecomposition(new Matrix(g.map((r) => Array.from(r))), { assumeSymmetric: true });
  const values = eig.realEigenvalues.map((e) => Math.max(0, e));
  const vectors = eig.eigenvectorMatrix;
  // Coordinates of b in the eigenbasis: c = V'b.
  const c = values.map((_, k) => {
    let sum = 0;
    for (let j = 0; j < p; j++) sum += vectors.get(j, k) * (b[j] as number);
    return sum;
  });
  let best = { gcv: Infinity, penalty: 0 };
  for (const scale of PENALTIES) {
    const penalty = scale * n;
    let df = 0;
    let fitted = 0; // y'H y = sum c_k^2 * e_k / (e_k + l)^2 * (2 (e_k + l) - e_k) ... expanded below
    for (let k = 0; k < p; k++) {
      const e = values[k] as number;
      const ck = c[k] as number;
      df += e / (e + penalty);
      // RSS = y'y - 2 beta'b + beta'G beta with beta_k = c_k / (e_k + l) in the eigenbasis.
      fitted += (2 * ck * ck) / (e + penalty) - (e * ck * ck) / (e + penalty) ** 2;
    }
    const rss = Math.max(0, yy - fitted);
    const gcv = (n * rss) / Math.max(1e-12, (n - df) ** 2);
    if (gcv < best.gcv) best = { gcv, penalty };
  }
  const beta = new Array<number>(p).fill(0);
  for (let k = 0; k < p; k++) {
    const w = (c[k] as number) / ((values[k] as number) + best.penalty);
    for (let j = 0; j < p; j++) beta[j] = (beta[j] as number) + vectors.get(j, k) * w;
  }
  return { beta, intercept: yMean, means, sds, penalty: best.penalty / n };
}

function evaluate(state: LinearState, x: number[]): number {
  let v = state.intercept;
  for (let j = 0; j < x.length; j++) {
    const sd = state.sds[j] as number;
    if (sd > 0) v += ((state.beta[j] as number) * ((x[j] as number) - (state.means[j] as number))) / sd;
  }
  return v;
}

function revive(state: LinearState): FittedModel<LinearState> {
  return {
    state,
    predict(rows: PredictRows) {
      const order = rows.time.map((_, i) => i).sort((a, b) => (rows.time[a] as number) - (rows.time[b] as number));
      const values = new Map<number, number>(state.history);
      const out = new Array<number>(rows.time.length).fill(0);
      let latest = state.history.at(-1)?.[1] ?? state.intercept;
      for (const i of order) {
        const t = rows.time[i] as number;
        // A lag that falls in a gap (or before the history) takes the latest known or predicted value.
        const lagValues = state.lags.map((lag) => values.get(t - lag) ?? latest);
        // Only the features the fit had (`ar` has none): the rows' calendar terms or inputs would otherwise
        // take the lags' places.
        const features = (rows.features[i] as number[]).slice(0, state.featureCount);
        const y = evaluate(state, terms(state, t, features, lagValues));
        out[i] = y;
        if (state.lags.length > 0 && t > state.lastTime && !values.has(t)) {
          values.set(t, y);
          latest = y;
        }
      }
      return out;
    },
    describe() {
      const parts: string[] = [];
      if (state.trend) parts.push('trend');
      if (state.season > 1) parts.push(`${state.season - 1} season dummies`);
      if (state.featureCount > 0) parts.push(`${state.featureCount} features`);
      // The `ar` family's lags 1..p read as a range.
      const run = state.lags.length > 3 && state.lags.every((lag, k) => lag === k + 1);
      if (state.lags.length > 0) parts.push(`lags ${run ? `1-${state.lags.length}` : state.lags.join(',')}`);
      return `ridge regression (penalty ${state.penalty.toPrecision(2)}) on ${parts.join(', ') || 'a constant'}`;
    },
  };
}

/**
 * Normal equations cost rows x terms^2: 5-minute data's 287 season dummies on 100,000 rows took 12-23 s a
 * fit, four fits a family. A time-ordered fit over this much work keeps its most recent rows, at
 * least ten seasons of them; every upload the benchmarks had before sub-daily data stays under it.
 */
const LINEAR_WORK = 3e8;

function recentRows(rows: FitRows, info: SeriesInfo): FitRows {
  const n = rows.time.length;
  const terms = 1 + Math.max(0, info.season - 1) + (rows.features[0]?.length ?? 0) + MAX_AR_ORDER;
  if (!info.timeOrdered || n * terms * terms <= LINEAR_WORK) return rows;
  const from = n - Math.min(n, Math.max(Math.ceil(LINEAR_WORK / (terms * terms)), 10 * info.season));
  return { time: rows.time.slice(from), features: rows.features.slice(from), target: (rows.target as number[]).slice(from) };
}

function fitLinear(all: FitRows, ctx: FitContext, withLags: boolean, override: { trend?: boolean; lags?: number[] } = {}): FittedModel<LinearState> {
  const rows = recentRows(all, ctx.info);
  const y = rows.target as number[];
  const { info } = ctx;
  const n = y.length;
  const timeOrdered = info.timeOrdered;
  const lags = override.lags ?? (withLags ? chooseLags(info, n) : []);
  const t0 = rows.time[0] as number;
  const shape = {
    trend: override.trend ?? (timeOrdered && n >= 3),
    season: timeOrdered && info.season > 1 && n >= 2 * info.season ? info.season : 0,
    lags,
    t0,
    tScale: Math.max(1, (rows.time[n - 1] as number) - t0),
  };
  const values = new Map<number, number>();
  rows.time.forEach((t, i) => values.set(t, y[i] as number));
  const x: number[][] = [];
  const target: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = rows.time[i] as number;
    const lagValues = lagValuesAt(values, t, lags);
    if (lagValues === null) continue;
    x.push(terms(shape, t, rows.features[i] as number[], lagValues));
    target.push(y[i] as number);
  }
  if (x.length < 3) throw new Error('too few rows for a regression');
  ctx.progress(0.5);
  const fit = fitRidge(x, target);
  const maxLag = lags.length > 0 ? Math.max(...lags) : 0;
  const lastTime = rows.time[n - 1] as number;
  const history: [number, number][] = [];
  for (let i = 0; i < n; i++) if ((rows.time[i] as number) > lastTime - maxLag - 1) history.push([rows.time[i] as number, y[i] as number]);
  ctx.progress(1);
  return revive({
    ...shape,
    ...fit,
    featureCount: rows.features[0]?.length ?? 0,
    lastTime,
    history: lags.length > 0 ? history : [[lastTime, y[n - 1] as number]],
    featureNames: ctx.featureNames,
  });
}

export const linearFamily: ModelFamily<LinearState> = {
  name: 'linear',
  kind: 'numeric',
  traits: { panelCost: 'cheap' },
  applies: (_info, n) => n >= 5,
  cost: (_info, n) => 1 + n / 20_000,
  fit: (rows, ctx) => fitLinear(rows, ctx, false),
  revive,
};

export const linearArFamily: ModelFamily<LinearState> = {
  name: 'linear_ar',
  kind: 'numeric',
  traits: { panelCost: 'cheap_without_cycle' },
  applies: (info, n) => info.timeOrdered && chooseLags(info, n).length > 0,
  cost: (_info, n) => 1 + n / 20_000,
  fit(rows, ctx) {
    if (!isRegular(rows.time)) throw new Error('the series is not regular enough for lags');
    return fitLinear(rows, ctx, true);
  },
  revive,
};

/**
 * `linear_diff`: the same ridge fit on the first differences of the output (an ARIMA(p,1,0)-like model with
 * drift and season dummies): lags 1-3 and the season of the differences. It follows a local trend (recent
 * growth) where `linear`'s one global trend cannot, and is integrated back step by step when forecasting.
 * Univariate: exogenous features are not used (their levels do not explain changes).
 */
interface DiffState {
  inner: LinearState;
  lastTime: number;
  lastValue: number;
}

const diffLags = (info: SeriesInfo) => (info.season > 1 ? [1, 2, 3, info.season] : [1, 2, 3]);

function reviveDiff(state: DiffState): FittedModel<DiffState> {
  const inner = revive(state.inner);
  return {
    state,
    predict(rows: PredictRows) {
      const order = rows.time.map((_, i) => i).sort((a, b) => (rows.time[a] as number) - (rows.time[b] as number));
      const out = new Array<number>(rows.time.length).fill(state.lastValue);
      // The inner model forecasts the differences at every step up to the furthest row, then they are summed.
      const furthest = Math.max(state.lastTime, ...rows.time);
      const steps = Array.from({ length: Math.max(0, furthest - state.lastTime) }, (_, k) => state.lastTime + 1 + k);
      const diffs = inner.predict({ time: steps, features: steps.map(() => []) }) as number[];
      const level = new Map<number, number>();
      let value = state.lastValue;
      steps.forEach((t, k) => level.set(t, (value += diffs[k] as number)));
      for (const i of order) {
        const t = rows.time[i] as number;
        out[i] = t > state.lastTime ? (level.get(t) as number) : state.lastValue;
      }
      return out;
    },
    describe: () => `AR on first differences (lags ${state.inner.lags.join(',')}) with drift${state.inner.season > 1 ? ' and season dummies' : ''}, ridge`,
  };
}

export const linearDiffFamily: ModelFamily<DiffState> = {
  name: 'linear_diff',
  kind: 'numeric',
  traits: { panelCost: 'cheap_without_cycle' },
  applies: (info, n) => info.timeOrdered && n >= Math.max(...diffLags(info)) + 14,
  cost: (_info, n) => 1 + n / 20_000,
  fit(all, ctx) {
    const rows = recentRows(all, ctx.info);
    if (!isRegular(rows.time)) throw new Error('the series is not regular enough for differences');
    const y = rows.target as number[];
    const time: number[] = [];
    const diffs: number[] = [];
    for (let i = 1; i < y.length; i++) {
      if ((rows.time[i] as number) - (rows.time[i - 1] as number) !== 1) continue;
      time.push(rows.time[i] as number);
      diffs.push((y[i] as number) - (y[i - 1] as number));
    }
    const lags = diffLags(ctx.info);
    const inner = fitLinear({ time, features: time.map(() => []), target: diffs }, ctx, true, { trend: false, lags });
    return reviveDiff({ inner: inner.state, lastTime: rows.time.at(-1) as number, lastValue: y.at(-1) as number });
  },
  revive: reviveDiff,
};

/**
 * `ar`: an autoregression long enough for cycles that are not a calendar season: lags 1..p of
 * the output with a constant, season dummies where the series is seasonal, and a linear trend when it
 * helps, p and the trend chosen by AICc as statsmodels' ar_select_order and auto.arima choose (least squares
 * on the same rows for every candidate order, those after the longest lag), p up to n/4 and MAX_AR_ORDER.
 * The chosen order is then fitted like `linear_ar` (ridge, penalty by GCV) and forecast recursively.
 * A series alone: where the rows carry features (a daily or sub-daily series' calendar terms, stated inputs) it
 * does not fit, since it would leave them out and `linear_ar` uses them. Fitted there, it changed the choice
 * where it lost: 15-minute flights 0.729 -> 0.873 MASE, the sub-daily mean 0.536 -> 0.557 (docs/benchmarks.md,
 * measured and not kept).
 */
export const MAX_AR_ORDER = 24;
/** Rows of the order selection: the last ones only, so a long upload costs as much as this many. */
const AR_SELECTION_ROWS = 2000;

export function selectArOrder(time: number[], y: number[], season: number, maxOrder: number): { p: number; trend: boolean } {
  const values = new Map<number, number>();
  time.forEach((t, i) => values.set(t, y[i] as number));
  const first = Math.max(0, time.length - AR_SELECTION_ROWS);
  const seasonal = season > 1 && time.length >= 2 * season;
  const design: number[][] = [];
  const target: number[] = [];
  const t0 = time[0] as number;
  const tScale = Math.max(1, (time.at(-1) as number) - t0);
  for (let i = first; i < time.length; i++) {
    const t = time[i] as number;
    const lags = lagValuesAt(values, t, Array.from({ length: maxOrder }, (_, k) => k + 1));
    if (lags === null) continue;
    const dummies: number[] = [];
    if (seasonal) for (let k = 1; k < season; k++) dummies.push(slotOf(t, season) === k ? 1 : 0);
    // Columns: constant, season dummies, lags 1..maxOrder, trend (last, so each candidate is a prefix plus it).
    design.push([1, ...dummies, ...lags, (t - t0) / tScale]);
    target.push(y[i] as number);
  }
  const n = design.length;
  const width = design[0]?.length ?? 0;
  const fixed = 1 + (seasonal ? season - 1 : 0);
  const gram = Array.from({ length: width }, () => new Float64Array(width));
  const xy = new Float64Array(width);
  let yy = 0;
  design.forEach((row, i) => {
    const v = target[i] as number;
    yy += v * v;
    for (let j = 0; j < width; j++) {
      xy[j] = (xy[j] as number) + (row[j] as number) * v;
      const g = gram[j] as Float64Array;
      for (let k = 0; k < width; k++) g[k] = (g[k] as number) + (row[j] as number) * (row[k] as number);
    }
  });
  let best = { aicc: Infinity, p: 1, trend: false };
  for (let p = 1; p <= maxOrder; p++) {
    for (const trend of [false, true]) {
      const columns = [...Array.from({ length: fixed + p }, (_, j) => j), ...(trend ? [width - 1] : [])];
      const k = columns.length;
      if (n - k - 1 <= 0) continue;
      const a = new Matrix(columns.map((j) => columns.map((c) => (gram[j] as Float64Array)[c] as number)));
      const b = Matrix.columnVector(columns.map((j) => xy[j] as number));
      let rss: number;
      try {
        const beta = solve(a, b);
        rss = yy - columns.reduce((sum, j, r) => sum + beta.get(r, 0) * (xy[j] as number), 0);
      } catch {
        continue;
      }
      const aicc = n * Math.log(Math.max(rss, 1e-300) / n) + 2 * k + (2 * k * (k + 1)) / (n - k - 1);
      if (aicc < best.aicc) best = { aicc, p, trend };
    }
  }
  return { p: best.p, trend: best.trend };
}

const maxArOrder = (rows: number) => Math.min(MAX_AR_ORDER, Math.floor(rows / 4));

export const arFamily: ModelFamily<LinearState> = {
  name: 'ar',
  kind: 'numeric',
  traits: { panelCost: 'cheap_without_cycle' },
  applies: (info, n) => info.timeOrdered && maxArOrder(n) >= 1 && n >= 16,
  cost: (_info, n) => 2 + Math.min(n, AR_SELECTION_ROWS) / 2_000,
  fit(all, ctx) {
    if ((all.features[0]?.length ?? 0) > 0) throw new Error('the rows have calendar terms or inputs, which the long autoregression would leave out');
    const rows = recentRows(all, ctx.info);
    if (!isRegular(rows.time)) throw new Error('the series is not regular enough for lags');
    const y = rows.target as number[];
    const { p, trend } = selectArOrder(rows.time, y, ctx.info.season, maxArOrder(y.length));
    ctx.progress(0.5);
    return fitLinear(rows, ctx, true, { trend, lags: Array.from({ length: p }, (_, k) => k + 1) });
  },
  revive,
};
