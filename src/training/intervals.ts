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
 * (docs/benchmarks.md, session 7). From 50 steps on the widths are the isotonic (least-squares
 * non-decreasing) fit of the per-step quantiles instead, which averages that noise rather than keeping its
 * peaks: long-horizon coverage 0.86 / 0.98 went to 0.79 / 0.96 with a lower interval score (session 9).
 */
export interface IntervalWidths {
  q80: number[];
  q95: number[];
}

const POOL = 2;
const POOL_SHARE = 0.05;

export function intervalWidths(errorsByStep: number[][]): IntervalWidths {
  const q80: number[] = [];
  const q95: number[] = [];
  const steps = errorsByStep.length;
  const radius = Math.max(POOL, Math.round(steps * POOL_SHARE));
  // The pool slides one step at a time, kept sorted, so a 20,000-step horizon costs insertions, not sorts.
  const pool: number[] = [];
  const move = (k: number, into: boolean) => {
    if (k < 0 || k >= steps) return;
    for (const e of (errorsByStep[k] as number[]).map(Math.abs)) {
      if (into) pool.splice(lowerBound(pool, e), 0, e);
      else pool.splice(lowerBound(pool, e), 1);
    }
  };
  for (let k = 0; k < radius; k++) move(k, true);
  const long = radius > POOL;
  for (let h = 0; h < steps; h++) {
    move(h + radius, true);
    move(h - radius - 1, false);
    q80.push(long ? conformalQuantile(pool, 0.8) : Math.max(conformalQuantile(pool, 0.8), q80.at(-1) ?? 0));
    q95.push(long ? conformalQuantile(pool, 0.95) : Math.max(conformalQuantile(pool, 0.95), q95.at(-1) ?? 0, q80.at(-1) as number));
  }
  if (!long) return { q80, q95 };
  const i80 = isotonic(q80);
  return { q80: i80, q95: isotonic(q95).map((w, h) => Math.max(w, i80[h] as number)) };
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
export function errorsByStep(windows: WindowErrors[], steps: number): number[][] {
  const byStep: number[][] = Array.from({ length: steps }, () => []);
  for (const w of windows) w.errors.forEach((e, j) => (byStep[Math.max(1, Math.min(steps, w.steps[j] as number)) - 1] as number[]).push(e));
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
