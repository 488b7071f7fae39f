/**
 * Closed forms the series families share: the regular time grid a fit works on, differences and moments, the
 * least-squares line (the ETS and Theta families' starting slope, the trending drift) and a Gaussian fit's AICc.
 */
/** Regular grid of the fit rows (last `cap` steps); throws on rows a smoother cannot use. */
export function gridOf(rows: { time: number[]; target: number[] | string[] }, family: string, cap: number): { start: number; series: number[] } {
  const target = rows.target as number[];
  if (target.some((v) => typeof v !== 'number' || !Number.isFinite(v))) throw new Error(`${family}: the target has non-numeric values`);
  for (let i = 1; i < rows.time.length; i++) if (!((rows.time[i] as number) > (rows.time[i - 1] as number))) throw new Error(`${family}: time must be strictly increasing`);
  return toGrid(rows.time.map(Math.round), target, cap);
}

/** Puts the rows on the full integer grid (linear interpolation across gaps) and keeps the last `cap` steps. */
export function toGrid(time: number[], target: number[], cap: number): { start: number; series: number[] } {
  if (time.length !== target.length || time.length === 0) throw new Error('sarima: no rows to fit');
  const first = time[0]!;
  const last = time[time.length - 1]!;
  const start = Math.max(first, last - cap + 1);
  const series: number[] = [];
  // Find the first row at or after `start`'s left neighbour.
  let i = 0;
  while (i + 1 < time.length && time[i + 1]! <= start) i++;
  for (let t = start; t <= last; t++) {
    while (i + 1 < time.length && time[i + 1]! <= t) i++;
    const t0 = time[i]!;
    const v0 = target[i]!;
    if (t0 === t || i + 1 >= time.length) {
      series.push(v0);
    } else {
      const t1 = time[i + 1]!;
      const v1 = target[i + 1]!;
      series.push(v0 + ((v1 - v0) * (t - t0)) / (t1 - t0));
    }
  }
  return { start, series };
}

export function diff(x: number[], lag: number): number[] {
  const out: number[] = [];
  for (let i = lag; i < x.length; i++) out.push(x[i]! - x[i - lag]!);
  return out;
}

export function mean(x: number[]): number {
  let s = 0;
  for (const v of x) s += v;
  return s / x.length;
}

/** The least-squares line through (i, x[i]); also the ETS and Theta families' starting slope. */
export function lineThrough(x: number[]): { slope: number; at: (i: number) => number } {
  const mx = (x.length - 1) / 2;
  const my = mean(x);
  let sxy = 0;
  let sxx = 0;
  x.forEach((v, i) => {
    sxy += (i - mx) * (v - my);
    sxx += (i - mx) ** 2;
  });
  const slope = sxx > 0 ? sxy / sxx : 0;
  return { slope, at: (i) => my + slope * (i - mx) };
}

export function variance(x: number[]): number {
  const m = mean(x);
  let s = 0;
  for (const v of x) s += (v - m) ** 2;
  return s / x.length;
}

/**
 * AICc of a Gaussian fit from its sum of squared errors over n observations with k parameters (the form ETS,
 * harmonic regression and the differencing compare their candidates by); Infinity where n <= k + 1.
 */
export function gaussianAicc(sse: number, n: number, k: number): number {
  return n - k - 1 > 0 ? n * Math.log(Math.max(sse, 1e-300) / n) + 2 * k + (2 * k * (k + 1)) / (n - k - 1) : Infinity;
}
