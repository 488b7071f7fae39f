/**
 * The global model across the series of a panel (the M5 lesson): ONE gradient-boosted tree model
 * trained on the rows of every series at once, each series scaled by its own size, so that many short series
 * (an annual panel of 48 states) teach one another what a single one cannot. A panel runs runGlobalRound once
 * per backtest window plus the final round (panel/panel-part.ts, run/job-parts.ts), and the result competes per
 * series with the local families.
 *
 * Per round and series, only rows up to the series' cut are seen. The series is laid on its time axis
 * (gaps forward-filled from the last known value), and each known row becomes a training row:
 * - target: the change from the previous value (or from the previous value plus last season's change, when
 *   that baseline predicts the panel's training rows better), over the row's scale: the larger of the
 *   series' mean |value| over its last max(12, season) values at the cut and the same measured just before
 *   the row (a series whose level fell a thousandfold keeps its old rows from owning the squared error);
 *   winsorized at 1% and 99%;
 * - features: lags 2..season+1 and the means of the last 3 and last season (or 8) values, each as its
 *   difference to the previous value over the scale; last season's change; the season position
 *   (time mod season); the series' index (the key). Lags before a series' start are missing (NaN), a bin of
 *   their own for the trees.
 * The trees are histogram-boosting.ts's; the leaf penalty (lambda 200 rows) shrinks small leaves towards the
 * baseline and out-of-bag rows stop the boosting when it no longer helps. Forecasts are recursive: each step
 * beyond the cut is predicted from the lags the earlier steps filled in, bounded to the laid-out values' range
 * widened on each side by half of it or by the series' scale, whichever is more.
 *
 * Measured on 11 real panels (a study now in git history; docs/benchmarks.md, panels), 9 of which are large
 * enough for it: the kept choices' mean MASE is at or below the best naive's on 7 of the 9 (geometric mean 0.87
 * of it); each choice's comment below says what its alternative did.
 */
import type { PanelDrivers } from './fixed-effects.js';
import { layDrivers } from './global-drivers.js';
import { fitHistogramBoosting, predictHistogramBoosting } from './histogram-boosting.js';

export interface GlobalSeries {
  /** Positions on the time axis in steps, integers, strictly increasing (gaps allowed). Every series of a panel shares one axis (same origin), so `time mod season` is the same season position in every series. */
  time: number[];
  /** Known values at those times (finite numbers). */
  values: number[];
}
export interface GlobalRound {
  /** Per series (same order as the series array): the last time the model may see of it; null = the series takes no part in this round. */
  cut: (number | null)[];
  /** Per series: the times to predict, all > cut, ascending; [] when none. */
  predict: number[][];
}
export interface GlobalOptions {
  /** Season length in steps (monthly 12, daily 7, quarterly 4); 1 = no season. */
  season: number;
  seed: number;
  /** Share 0..1 of the work done; call it at least every ~100 ms. */
  progress?: (share: number) => void;
  /** The final round: its times to predict are the rows to forecast (the drivers' future rows), not known rows. */
  final?: boolean;
  /** The panel's known drivers, aligned with the series: each its scaled change and level (global-drivers.ts); missing where a series lacks it. */
  drivers?: PanelDrivers;
}

/*
 * The kept choices. Each comment gives the alternative's geometric mean over the 9 real panels the model runs on
 * of (its mean MASE / the best naive's), against 0.872 for these (seed 1; seeds 2 and 3 move the kept figure by
 * about 1.5%, so differences under ~2% are noise).
 * - Target: the change from the previous value over the scale. The level 1.356: trees cannot go past the levels
 *   they saw, so trends stop (jobs 9.3 vs 5.4); only the daily weather's mean-reverting measures prefer it.
 * - Seasonal data measure it from the previous value plus last season's change where that predicts the training
 *   rows better: unchanged on the real panels; a pure seasonal pattern repeated across 8 series is continued within
 *   1% of its level two seasons ahead instead of up to 10% (test/unit/global-model.test.ts).
 * - Scale: mean |value| of the last values; mean |change| (MASE's scale) 0.930.
 * - Each row scaled by the values just before it, never below its series' scale; the series' scale at the cut
 *   only 1.033 (deaths by disaster type 1.81 vs 0.50: its 1900s values were 1000x today's); a floor of 0.2 of the
 *   series' scale 1.064 (a run of zeros makes a row's own scale tiny and its target huge).
 * - Targets winsorized at 1% and 99%; no clip 1.025.
 * - The trees start from the rows' mean; from no change (the naive forecast) 0.889.
 * - The series' index as a feature; without it 0.891, and 1-3% worse on each of 3 seeds (weather's temperatures,
 *   wind and rain 1.19 vs 1.29; population 2.77 vs 2.97). Steps since a series' start as a feature 0.878, and it
 *   lets a tree single out a period (the stocks' 2008) that never comes back.
 * - The trees are histogram-boosting.ts's; boosting.ts's exact trees (on 1,000 evenly spaced rows, 100 depth-3
 *   rounds) 1.115 in twice the time.
 */
/** Training rows in all (the most recent rows of each series, a fair share each); only large panels reach it: a cap of 2,000 on these 0.894. */
const MAX_ROWS = 100_000;
/** Fewest rows per leaf (and at least one in 1,000 of the rows); 10 rows 0.877. */
const MIN_LEAF = 40;
/** Boosting: 100 rounds at shrinkage 0.1 0.882, depth 3 0.876, no out-of-bag stop 0.875 (and 200 trees on a random walk instead of about 20). */
const BOOSTING = { rounds: 200, patience: 50, depth: 5, shrinkage: 0.05, subsample: 0.5 };
/** Most rows one tree is grown on: bounds a round at ~2-3 s of CPU on 100k rows (1,000 monthly series); the real panels never reach it. */
const MAX_SAMPLE = 12_500;
/** Leaf penalty in rows; 20 0.917, 1000 0.887: a small leaf stays near the baseline (no change) unless it holds hundreds of rows. */
const LAMBDA = 200;
/** Targets winsorized at this quantile and 1 minus it, so a few spikes do not own the squared error. */
const CLIP = 0.01;

/**
 * Fewer training rows in a round than this and the panel is too small to learn across: Iowa's 3 annual sources
 * (36 rows) scored 1.64x the naive's MASE and the Crimean war's 3 monthly causes (51 rows) 1.90x with a
 * bound of 30 rows (the geometric mean over all 11 panels then 0.991 instead of 0.872 over the 9).
 */
const MIN_ROWS = 100;
/** Values the scale is measured on (the last of them at or before the cut), at least a season. */
const SCALE_VALUES = 12;
/** A series' rows may span at most this many times its row share in steps (a bound on the axis laid out for very gappy series). */
const MAX_SPAN_FACTOR = 20;

interface Layout {
  season: number;
  lags: number[];
  /** Rolling mean windows. */
  means: number[];
  /** Values a row's own scale is measured on. */
  scaleWindow: number;
  names: string[];
  width: number;
  /** Known drivers read (two features each, after the series key). */
  drivers: number;
}

function layoutOf(season: number, drivers: string[] = []): Layout {
  const top = Math.min(Math.max(season + 1, 5), 25);
  const lags = Array.from({ length: top }, (_, i) => i + 1);
  if (season + 1 > top) lags.push(season, season + 1);
  // Lag 1 minus the previous value is always 0.
  const usedLags = lags.filter((k) => k > 1);
  const means = [3, season > 1 ? season : 8];
  const names = [
    ...usedLags.map((k) => `lag ${k}`),
    ...means.map((w) => `mean of last ${w}`),
    ...(season > 1 ? ['change one season ago', 'season position'] : []),
    'series key',
    ...drivers.flatMap((d) => [`${d} change`, `${d} level`]),
  ];
  return { season, lags: usedLags, means, scaleWindow: Math.max(season, SCALE_VALUES), names, width: names.length, drivers: drivers.length };
}

/** A series laid on its time axis from `start`: dense[p] is the value at time start + p (forward-filled), NaN before its first value. */
interface Dense {
  start: number;
  values: Float64Array;
  /** Filled length (the rest is room for recursive forecasts). */
  length: number;
  scale: number;
  /** Bounds of the recursive forecasts: the laid-out values' range widened by half of it (at least the scale) on each side. */
  low: number;
  high: number;
  /** Per driver, its scaled change and level at each position (forecast room included); NaN where unknown. */
  drivers?: { change: Float64Array; level: Float64Array }[];
}

/** Index of the first element > x in ascending `a` (= count of elements <= x). */
function upperBound(a: number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((a[mid] as number) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function scaleOf(values: number[], known: number, season: number): number {
  const w = Math.max(season, SCALE_VALUES);
  const from = Math.max(0, known - w);
  let level = 0;
  for (let i = from; i < known; i++) level += Math.abs(values[i] as number);
  level /= Math.max(1, known - from);
  if (level > 1e-12) return level;
  let all = 0;
  for (let i = 0; i < known; i++) all = Math.max(all, Math.abs(values[i] as number));
  return all > 1e-12 ? all : 1;
}

/** Lays `s` out from time `start` to `cut` (forward-filled), with room for `extra` forecast steps. */
function layOut(s: GlobalSeries, known: number, start: number, cut: number, extra: number, scale: number): Dense {
  const length = cut - start + 1;
  const values = new Float64Array(length + extra).fill(NaN);
  let j = upperBound(s.time, start - 1) - 1; // the last value before start carries into it
  let last = j >= 0 ? (s.values[j] as number) : NaN;
  j++;
  for (let p = 0; p < length; p++) {
    const t = start + p;
    while (j < known && (s.time[j] as number) <= t) last = s.values[j++] as number;
    values[p] = last;
  }
  let min = Infinity;
  let max = -Infinity;
  for (let p = 0; p < length; p++) {
    const v = values[p] as number;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const margin = Math.max(0.5 * (max - min), scale);
  return { start, values, length, scale, low: min - margin, high: max + margin };
}

/** What featuresAt measured a row from. */
interface Basis {
  /** The previous value; NaN when there is none. */
  anchor: number;
  /** The change one season earlier (value a season before minus the one before that), 0 without a season or data. */
  step: number;
  scale: number;
}

/** The row's own scale: mean |value| of the `window` values before p, at least the series' scale. */
function rowScale(d: Dense, p: number, window: number): number {
  const v = d.values;
  let sum = 0;
  let n = 0;
  for (let q = Math.max(0, p - window); q < p; q++) {
    const term = Math.abs(v[q] as number);
    if (Number.isNaN(term)) continue;
    sum += term;
    n++;
  }
  const s = n > 0 ? sum / n : 0;
  return Math.max(s, d.scale);
}

/**
 * Writes the features of position p (time start + p) of `d` into out[o..o+width) and returns what the target
 * is measured from; anchor NaN when position p - 1 has no value.
 */
function featuresAt(d: Dense, p: number, layout: Layout, key: number, out: Float32Array | Float64Array, o: number): Basis {
  const v = d.values;
  const anchor = p >= 1 ? (v[p - 1] as number) : NaN;
  const s = rowScale(d, p, layout.scaleWindow);
  const at = (q: number) => (q >= 0 ? (v[q] as number) : NaN);
  let k = o;
  for (const lag of layout.lags) out[k++] = (at(p - lag) - anchor) / s;
  for (const w of layout.means) {
    let sum = 0;
    for (let q = p - w; q < p; q++) sum += at(q);
    out[k++] = (sum / w - anchor) / s;
  }
  const time = d.start + p;
  const step = layout.season > 1 ? at(p - layout.season) - at(p - layout.season - 1) : 0;
  if (layout.season > 1) {
    out[k++] = step / s;
    out[k++] = ((time % layout.season) + layout.season) % layout.season;
  }
  out[k++] = key;
  for (const driver of d.drivers ?? []) {
    out[k++] = driver.change[p] as number;
    out[k++] = driver.level[p] as number;
  }
  return { anchor, step: Number.isNaN(step) ? 0 : step, scale: s };
}

/** Per-series row counts under a total cap: every series keeps all its rows up to an equal share, the shares of short series go to long ones. */
export function fairShares(counts: number[], cap: number): number[] {
  const order = counts.map((_, i) => i).sort((a, b) => (counts[a] as number) - (counts[b] as number));
  const shares = counts.map(() => 0);
  let left = cap;
  order.forEach((i, rank) => {
    const share = Math.floor(left / (order.length - rank));
    const take = Math.min(counts[i] as number, share);
    shares[i] = take;
    left -= take;
  });
  return shares;
}

interface Prepared {
  dense: (Dense | null)[];
  rows: number;
  x: Float32Array;
  y: Float64Array;
  series: number;
  /** The target is measured from the previous value plus last season's change (else from the previous value). */
  seasonal: boolean;
}

/** Each participating series laid out and its most recent rows up to the cut turned into training rows. */
function prepare(series: GlobalSeries[], round: GlobalRound, layout: Layout, alive: () => void, drivers?: PanelDrivers, final = false): Prepared {
  const maxLag = Math.max(...layout.lags, ...layout.means, layout.season + 1);
  const known = series.map((s, i) => {
    const cut = round.cut[i];
    return cut === null || cut === undefined ? 0 : upperBound(s.time, cut);
  });
  // Rows: every known value after a series' first one (the first has no previous value to measure from).
  const counts = known.map((k) => Math.max(0, k - 1));
  const shares = fairShares(counts, MAX_ROWS);
  const dense: (Dense | null)[] = series.map((s, i) => {
    if ((i & 255) === 255) alive();
    const cut = round.cut[i];
    if (cut === null || cut === undefined || (known[i] as number) === 0) return null;
    const k = known[i] as number;
    const share = shares[i] as number;
    // The oldest row kept; a very gappy series keeps fewer rows rather than lay out a huge axis.
    let firstRow = k - share;
    while (share > 0 && firstRow < k - 1 && cut - (s.time[firstRow] as number) > MAX_SPAN_FACTOR * share + maxLag) firstRow++;
    shares[i] = k - firstRow;
    const start = share > 0 ? Math.max(s.time[0] as number, (s.time[firstRow] as number) - maxLag - 1) : Math.max(s.time[0] as number, cut - maxLag - 1);
    const predict = round.predict[i] ?? [];
    const last = predict.length > 0 ? (predict[predict.length - 1] as number) - cut : 0;
    const extra = Number.isFinite(last) ? Math.max(0, Math.ceil(last)) : 0;
    const d = layOut(s, k, start, cut, extra, scaleOf(s.values, k, layout.season));
    if (drivers && layout.drivers > 0) d.drivers = layDrivers(s.time, drivers.series[i] ?? null, drivers.columns.length, { start: d.start, length: d.length, size: d.values.length }, cut, predict, final);
    return d;
  });
  const total = shares.reduce((a, b) => a + b, 0);
  const x = new Float32Array(total * layout.width);
  const y = new Float64Array(total);
  const steps = new Float64Array(total);
  let n = 0;
  let participating = 0;
  series.forEach((s, i) => {
    const d = dense[i];
    const share = shares[i] as number;
    if ((i & 255) === 255) alive();
    if (!d || share === 0) return;
    participating++;
    const k = known[i] as number;
    for (let r = k - share; r < k; r++) {
      const p = (s.time[r] as number) - d.start;
      const { anchor, step, scale } = featuresAt(d, p, layout, i, x, n * layout.width);
      if (Number.isNaN(anchor)) continue;
      y[n] = ((s.values[r] as number) - anchor) / scale;
      steps[n] = step / scale;
      n++;
    }
  });
  // The trees start from, and their penalty shrinks towards, the better one-step baseline on these rows:
  // the previous value, or it plus last season's change (a seasonal pattern then needs no tree to continue).
  let naiveError = 0;
  let seasonalError = 0;
  for (let i = 0; i < n; i++) {
    naiveError += (y[i] as number) ** 2;
    seasonalError += ((y[i] as number) - (steps[i] as number)) ** 2;
  }
  const seasonal = layout.season > 1 && seasonalError < naiveError;
  if (seasonal) for (let i = 0; i < n; i++) y[i] = (y[i] as number) - (steps[i] as number);
  const target = y.subarray(0, n);
  if (n > 0) {
    const sorted = Float64Array.from(target).sort();
    const low = sorted[Math.floor(CLIP * (n - 1))] as number;
    const high = sorted[Math.ceil((1 - CLIP) * (n - 1))] as number;
    for (let i = 0; i < n; i++) target[i] = Math.min(high, Math.max(low, target[i] as number));
  }
  return { dense, rows: n, x: x.subarray(0, n * layout.width), y: target, series: participating, seasonal };
}

/** Recursive forecasts of one laid-out series at `times` (all after its cut). */
function forecast(d: Dense, times: number[], model: Learnt, layout: Layout, key: number, seasonal: boolean): number[] {
  const row = new Float64Array(layout.width);
  const out: number[] = [];
  let j = 0;
  for (let p = d.length; j < times.length && p < d.values.length; p++) {
    const basis = featuresAt(d, p, layout, key, row, 0);
    const change = model.predict(row) * basis.scale;
    const from = basis.anchor + (seasonal ? basis.step : 0);
    const value = Math.min(d.high, Math.max(d.low, from + change));
    // Recursion feeds every forecast back as a lag: on spiky series an unbounded step compounds into values
    // many times anything seen (deaths by disaster type: 480x the naive's MASE before this bound).
    d.values[p] = value;
    // A time off the integer axis (outside the contract) gets NaN instead of stalling the loop.
    while (j < times.length && (times[j] as number) <= d.start + p) out.push(times[j++] === d.start + p ? value : NaN);
  }
  while (out.length < times.length) out.push(NaN);
  return out;
}

/** A fitted learner: the scaled target of one feature row. */
interface Learnt {
  predict(row: Float64Array): number;
  trees: number;
}

function learn(prepared: Prepared, width: number, seed: number, progress: (share: number) => void): Learnt {
  const model = fitHistogramBoosting(prepared.x, prepared.y, prepared.rows, width, {
    ...BOOSTING,
    maxSample: MAX_SAMPLE,
    lambda: LAMBDA,
    minLeaf: Math.max(MIN_LEAF, Math.round(prepared.rows / 1000)),
    seed,
    progress,
  });
  const binned = new Uint8Array(width);
  return { trees: model.roots.length, predict: (row) => predictHistogramBoosting(model, row, binned) };
}

const describeLags = (lags: number[]) => {
  const first = lags[0] as number;
  const last = lags[lags.length - 1] as number;
  return lags.length === last - first + 1 ? `lags ${first}-${last}` : `lags ${lags.join(',')}`;
};

/** What one round trained on (the description names the largest round). */
export interface GlobalRoundTrained {
  series: number;
  rows: number;
  trees: number;
  seasonal: boolean;
}

/** One round's predictions per series, and what it trained on (null: nothing to predict, nothing trained). */
export interface GlobalRoundRun {
  predictions: number[][];
  trained: GlobalRoundTrained | null;
}

/**
 * Round r of a global run on its own (the rounds of one panel may run on different threads): each
 * round's model depends only on the series, its cut and r. Null when the panel is too small to learn across.
 */
export function runGlobalRound(series: GlobalSeries[], round: GlobalRound, r: number, options: GlobalOptions): GlobalRoundRun | null {
  if (series.length < 2) return null;
  const drivers = options.drivers;
  const layout = layoutOf(Math.max(1, Math.round(options.season)), drivers?.columns ?? []);
  // Shares only grow; alive() repeats the last one during work that has no share of its own (rows, forecasts).
  let done = 0;
  const report = (share: number) => {
    done = Math.max(done, share);
    options.progress?.(done);
  };
  const alive = () => report(done);
  const wanted = series.some((_, i) => round.cut[i] !== null && round.cut[i] !== undefined && (round.predict[i]?.length ?? 0) > 0);
  if (!wanted) {
    report(1);
    return { predictions: series.map(() => []), trained: null };
  }
  const prepared = prepare(series, round, layout, alive, drivers, options.final === true);
  if (prepared.rows < MIN_ROWS || prepared.series < 2) return null;
  const model = learn(prepared, layout.width, (options.seed ^ Math.imul(r + 1, 0x9e3779b1)) >>> 0, (share) => report(0.9 * share));
  const predictions = series.map((_, i) => {
    if ((i & 255) === 255) alive();
    const times = round.predict[i] ?? [];
    if (round.cut[i] === null || round.cut[i] === undefined || times.length === 0) return [];
    const d = prepared.dense[i];
    return d ? forecast(d, times, model, layout, i, prepared.seasonal) : times.map(() => NaN);
  });
  report(1);
  return { predictions, trained: { series: prepared.series, rows: prepared.rows, trees: model.trees, seasonal: prepared.seasonal } };
}

/** The run's one line, of the largest round it trained (the last of equals). */
export function describeGlobalRun(trained: (GlobalRoundTrained | null)[], season: number, drivers: string[] = []): string {
  const layout = layoutOf(Math.max(1, Math.round(season)));
  let trainedOn: GlobalRoundTrained = { series: 0, rows: 0, trees: 0, seasonal: false };
  for (const t of trained) if (t && t.rows >= trainedOn.rows) trainedOn = t;
  const target = trainedOn.seasonal ? "the change from the previous value plus last season's change" : 'the change from the previous value';
  const features = [
    describeLags(layout.lags),
    `means of the last ${layout.means.join(' and ')}`,
    ...(season > 1 ? [`the change one season ago`, `season position (of ${season})`] : []),
    'series key',
    ...(drivers.length > 0 ? [`the known drivers' changes and levels (${drivers.join(', ')})`] : []),
  ];
  return (
    `global boosting over ${trainedOn.series} series (${trainedOn.rows} rows): ${trainedOn.trees} rounds of depth-${BOOSTING.depth} histogram trees ` +
    `on ${layout.width} features (${features.join(', ')}), predicting ${target} over each series' mean absolute level, recursively`
  );
}
