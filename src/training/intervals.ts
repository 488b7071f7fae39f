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
 * (docs/benchmarks.md, session 7).
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
  const radius = Math.max(POOL, Math.round(errorsByStep.length * POOL_SHARE));
  for (let h = 0; h < errorsByStep.length; h++) {
    const pool: number[] = [];
    for (let k = Math.max(0, h - radius); k <= Math.min(errorsByStep.length - 1, h + radius); k++) pool.push(...(errorsByStep[k] as number[]));
    q80.push(Math.max(conformalQuantile(pool, 0.8), q80.at(-1) ?? 0));
    q95.push(Math.max(conformalQuantile(pool, 0.95), q95.at(-1) ?? 0, q80.at(-1) as number));
  }
  return { q80, q95 };
}

/** Width for a row `step` steps after the last known row (steps past the backtested horizon keep the last width). */
export function widthAt(widths: IntervalWidths, step: number): { w80: number; w95: number } {
  const i = Math.max(0, Math.min(widths.q80.length - 1, Math.round(step) - 1));
  return { w80: widths.q80[i] ?? 0, w95: widths.q95[i] ?? 0 };
}

function conformalQuantile(errors: number[], q: number): number {
  if (errors.length === 0) return 0;
  const sorted = errors.map(Math.abs).sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.ceil((sorted.length + 1) * q));
  return sorted[rank - 1] as number;
}
