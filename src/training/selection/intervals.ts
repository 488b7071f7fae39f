/**
 * Conformal-style prediction intervals from backtest errors: for each horizon step h (1..H), the 80% and 95%
 * quantiles of the absolute errors the chosen model made at steps h-r..h+r across the backtest windows
 * (pooling neighbours so three windows give enough errors), with the finite-sample correction
 * ceil((m + 1) q) / m, then made non-decreasing in h so intervals widen with the horizon. Tabular data has
 * no steps: one pooled width for every row.
 *
 * The radius r is 2 steps, or 5% of the horizon when that is more (from 50 steps on). The running maximum
 * that makes widths non-decreasing climbs on the noise of each step's quantile: with 15 errors a step over a
 * 292-day horizon, Seattle's 80% interval covered 100% of the hidden days. On ten other long-horizon real
 * series the wider pool brought coverage nearer its nominal level and lowered the interval score
 * (docs/benchmarks.md, intervals). From 50 steps on the widths are the isotonic (least-squares
 * non-decreasing) fit of the per-step quantiles instead, which averages that noise rather than keeping its
 * peaks: long-horizon coverage 0.86 / 0.98 went to 0.79 / 0.96 with a lower interval score.
 *
 * A pool of fewer than 19 errors has no conformal 95% quantile (it would be their largest), and its errors
 * are not that many independent draws: a window's errors at neighbouring steps move together (a missed turn
 * shifts them all). Such a pool also gets a Student-t width on its effective number of independent errors
 * (the pool size over the design effect 1 + (k - 1) rho, rho the intraclass correlation of the errors by
 * window, or the lag-1 autocorrelation with one window), and the wider of the two is kept. On the 60 corpus
 * series (short ones, 12 steps and 3 windows) coverage went from 0.68 / 0.77 to 0.75 / 0.91.
 */
import jStat from 'jstat';

export interface IntervalWidths {
  q80: number[];
  q95: number[];
}

const POOL = 2;
const POOL_SHARE = 0.05;
/** The fewest errors whose conformal 95% quantile is not simply their largest: ceil((m + 1) 0.95) <= m. */
const MIN_CONFORMAL_95 = 19;

/** The backtest errors at one horizon step, each with the window (its index) it came from. */
export interface StepErrors {
  errors: number[];
  windows: number[];
}

export function intervalWidths(byStep: StepErrors[]): IntervalWidths {
  const q80: number[] = [];
  const q95: number[] = [];
  const steps = byStep.length;
  const radius = Math.max(POOL, Math.round(steps * POOL_SHARE));
  // The pool slides one step at a time, kept sorted, so a 20,000-step horizon costs insertions, not sorts.
  const pool: number[] = [];
  const move = (k: number, into: boolean) => {
    if (k < 0 || k >= steps) return;
    for (const e of (byStep[k] as StepErrors).errors.map(Math.abs)) {
      if (into) pool.splice(lowerBound(pool, e), 0, e);
      else pool.splice(lowerBound(pool, e), 1);
    }
  };
  for (let k = 0; k < radius; k++) move(k, true);
  const long = radius > POOL;
  for (let h = 0; h < steps; h++) {
    move(h + radius, true);
    move(h - radius - 1, false);
    const small = pool.length < MIN_CONFORMAL_95 ? smallPoolWidths(byStep, h - radius, h + radius) : { w80: 0, w95: 0 };
    const w80 = Math.max(conformalQuantile(pool, 0.8), small.w80);
    const w95 = Math.max(conformalQuantile(pool, 0.95), small.w95);
    q80.push(long ? w80 : Math.max(w80, q80.at(-1) ?? 0));
    q95.push(long ? w95 : Math.max(w95, q95.at(-1) ?? 0, q80.at(-1) as number));
  }
  if (!long) return { q80, q95 };
  const i80 = isotonic(q80);
  return { q80: i80, q95: isotonic(q95).map((w, h) => Math.max(w, i80[h] as number)) };
}

/**
 * Student-t widths for a pool too small for a conformal 95% quantile: scale from the mean absolute error
 * (normal-consistent), degrees of freedom from the effective number of independent errors, inflated as a
 * prediction for one new error (sqrt(1 + 1/n)).
 */
export function smallPoolWidths(byStep: StepErrors[], from: number, to: number): { w80: number; w95: number } {
  // Each window's errors in step order, so that one window's lag-1 correlation can be read.
  const byWindow = new Map<number, number[]>();
  for (let k = Math.max(0, from); k <= Math.min(byStep.length - 1, to); k++) {
    const { errors, windows } = byStep[k] as StepErrors;
    errors.forEach((e, j) => {
      const w = windows[j] as number;
      const group = byWindow.get(w);
      if (group) group.push(e);
      else byWindow.set(w, [e]);
    });
  }
  const groups = [...byWindow.values()];
  const m = groups.reduce((n, g) => n + g.length, 0);
  if (m === 0) return { w80: 0, w95: 0 };
  const scale = (groups.flat().reduce((sum, e) => sum + Math.abs(e), 0) / m) * Math.sqrt(Math.PI / 2);
  const rho = groups.length > 1 ? intraclassCorrelation(groups) : lagOneCorrelation(groups[0] as number[]);
  const effective = Math.max(groups.length, m / (1 + (m / groups.length - 1) * rho));
  const spread = scale * Math.sqrt(1 + 1 / effective);
  const dof = Math.max(1, effective - 1);
  return { w80: jStat.studentt.inv(0.9, dof) * spread, w95: jStat.studentt.inv(0.975, dof) * spread };
}

/** One-way ANOVA intraclass correlation of groups of unequal size, in [0, 1]: how much a group moves together. */
function intraclassCorrelation(groups: number[][]): number {
  const k = groups.length;
  const n = groups.reduce((sum, g) => sum + g.length, 0);
  if (n <= k) return 1;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const grand = mean(groups.flat());
  const n0 = (n - groups.reduce((sum, g) => sum + g.length ** 2, 0) / n) / (k - 1);
  const between = groups.reduce((sum, g) => sum + g.length * (mean(g) - grand) ** 2, 0) / (k - 1);
  const within = groups.reduce((sum, g) => {
    const m = mean(g);
    return sum + g.reduce((s, e) => s + (e - m) ** 2, 0);
  }, 0) / (n - k);
  const denominator = between + (n0 - 1) * within;
  return denominator > 0 ? Math.min(1, Math.max(0, (between - within) / denominator)) : 1;
}

/** Lag-1 correlation about zero (a shared bias counts as correlation), in [0, 0.999]. */
function lagOneCorrelation(errors: number[]): number {
  let lagged = 0;
  let squares = 0;
  errors.forEach((e, t) => {
    squares += e * e;
    if (t > 0) lagged += e * (errors[t - 1] as number);
  });
  return squares > 0 ? Math.min(0.999, Math.max(0, lagged / squares)) : 0;
}

/** The non-decreasing sequence nearest to `ys` in least squares (pool-adjacent-violators). */
function isotonic(ys: number[]): number[] {
  const means: number[] = [];
  const sizes: number[] = [];
  for (const y of ys) {
    let m = y;
    let c = 1;
    while (means.length > 0 && (means.at(-1) as number) > m) {
      const c0 = sizes.pop() as number;
      m = ((means.pop() as number) * c0 + m * c) / (c0 + c);
      c += c0;
    }
    means.push(m);
    sizes.push(c);
  }
  return means.flatMap((m, k) => new Array<number>(sizes[k] as number).fill(m));
}

/** Width for a row `step` steps after the last known row (steps past the backtested horizon keep the last width). */
export function widthAt(widths: IntervalWidths, step: number): { w80: number; w95: number } {
  const i = Math.max(0, Math.min(widths.q80.length - 1, Math.round(step) - 1));
  return { w80: widths.q80[i] ?? 0, w95: widths.q95[i] ?? 0 };
}

/** The finite-sample conformal quantile of absolute errors already sorted ascending. */
function conformalQuantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length, Math.ceil((sorted.length + 1) * q));
  return sorted[rank - 1] as number;
}

/** The first index whose value is >= v (where v goes in, or where it already stands). */
function lowerBound(sorted: number[], v: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** One backtest window's errors: the rows it predicted, each row's horizon step (1-based) and error. */
export interface WindowErrors {
  rows: number[];
  steps: number[];
  errors: number[];
}

/** The windows' errors gathered by horizon step (steps past `steps` count as the last), what intervalWidths takes. */
export function errorsByStep(windows: WindowErrors[], steps: number): StepErrors[] {
  const byStep: StepErrors[] = Array.from({ length: steps }, () => ({ errors: [], windows: [] }));
  windows.forEach((w, index) =>
    w.errors.forEach((e, j) => {
      const at = byStep[Math.max(1, Math.min(steps, w.steps[j] as number)) - 1] as StepErrors;
      at.errors.push(e);
      at.windows.push(index);
    }),
  );
  return byStep;
}

/**
 * How often the intervals held the truth on the backtest, honestly: each window is checked against widths
 * built from the other windows whose rows it does not share (the widths never saw its errors). Null when
 * no window has such others.
 */
export function heldOutCoverage(windows: WindowErrors[], horizon: number): { p80: number; p95: number; rows: number } | null {
  let rows = 0;
  let in80 = 0;
  let in95 = 0;
  const steps = Math.max(1, horizon);
  windows.forEach((w, k) => {
    const own = new Set(w.rows);
    const others = windows.filter((o, j) => j !== k && !o.rows.some((r) => own.has(r)));
    if (others.length === 0) return;
    const widths = intervalWidths(errorsByStep(others, steps));
    w.errors.forEach((e, j) => {
      const { w80, w95 } = widthAt(widths, w.steps[j] as number);
      rows++;
      if (Math.abs(e) <= w80) in80++;
      if (Math.abs(e) <= w95) in95++;
    });
  });
  return rows === 0 ? null : { p80: in80 / rows, p95: in95 / rows, rows };
}
