/**
 * STL: Seasonal-Trend decomposition by Loess (Cleveland, Cleveland, McRae, Terpenning 1990), a port of the
 * authors' Fortran (netlib stl, the code behind R's stats::stl and statsmodels' STL) without the robustness
 * iterations (the MSTL family does not use them, as R's mstl by default).
 *
 * The inner loop, `inner` times: detrend; smooth each cycle-subseries by loess and extend it one cycle on
 * each side; low-pass filter that (moving averages of period, period and 3, then a loess) and subtract, so
 * the seasonal component carries no trend; deseasonalise; smooth the trend by loess.
 *
 * Each loess is evaluated only every `jump` points and linearly interpolated between them (the Fortran's
 * `njump`), so a pass costs about 10 window-lengths per jump: O(n) whatever the window. Defaults are R's
 * stl's for a numeric s.window: seasonal degree 0, trend and low-pass degree 1, trend window
 * nextodd(ceil(1.5 period / (1 - 1.5 / seasonal))), low-pass window nextodd(period), jumps ceil(window / 10),
 * two inner passes.
 */

export interface StlOptions {
  /** Season length in steps, an integer >= 2. */
  period: number;
  /** Seasonal smoother's span in cycles (odd, >= 3). */
  seasonal: number;
  trend?: number;
  lowPass?: number;
  seasonalDegree?: 0 | 1;
  trendDegree?: 0 | 1;
  lowPassDegree?: 0 | 1;
  seasonalJump?: number;
  trendJump?: number;
  lowPassJump?: number;
  inner?: number;
}

export interface StlResult {
  seasonal: Float64Array;
  trend: Float64Array;
  remainder: Float64Array;
}

const nextOdd = (x: number) => {
  const r = Math.round(x);
  return r % 2 === 0 ? r + 1 : r;
};

/**
 * The loess value at abscissa xs (1-based positions, as the Fortran) from y[nleft..nright] with tricube
 * weights; null when every weight is 0. `w` is scratch of at least n + 1.
 */
function estimate(y: Float64Array, n: number, len: number, degree: number, xs: number, nleft: number, nright: number, w: Float64Array): number | null {
  const range = n - 1;
  let h = Math.max(xs - nleft, nright - xs);
  if (len > n) h += Math.floor((len - n) / 2);
  const h9 = 0.999 * h;
  const h1 = 0.001 * h;
  let a = 0;
  for (let j = nleft; j <= nright; j++) {
    w[j] = 0;
    const r = Math.abs(j - xs);
    if (r <= h9) {
      const q = r / h;
      const u = 1 - q * q * q;
      w[j] = r <= h1 ? 1 : u * u * u;
      a += w[j]!;
    }
  }
  if (a <= 0) return null;
  for (let j = nleft; j <= nright; j++) w[j]! /= a;
  if (h > 0 && degree > 0) {
    let centre = 0;
    for (let j = nleft; j <= nright; j++) centre += w[j]! * j;
    let b = xs - centre;
    let c = 0;
    for (let j = nleft; j <= nright; j++) c += w[j]! * (j - centre) * (j - centre);
    if (Math.sqrt(c) > 0.001 * range) {
      b /= c;
      for (let j = nleft; j <= nright; j++) w[j]! *= b * (j - centre) + 1;
    }
  }
  let ys = 0;
  for (let j = nleft; j <= nright; j++) ys += w[j]! * y[j - 1]!;
  return ys;
}

/** Loess smooth of y[0..n-1] with span `len` into ys, evaluated every `jump` points (the Fortran's stless). */
function smooth(y: Float64Array, n: number, len: number, degree: number, jump: number, ys: Float64Array, w: Float64Array): void {
  if (n < 2) {
    ys[0] = y[0]!;
    return;
  }
  const step = Math.max(1, Math.min(jump, n - 1));
  let nleft = 1;
  let nright = n;
  const put = (i: number) => {
    const v = estimate(y, n, len, degree, i, nleft, nright, w);
    ys[i - 1] = v ?? y[i - 1]!;
  };
  if (len >= n) {
    for (let i = 1; i <= n; i += step) put(i);
  } else if (step === 1) {
    const half = Math.floor((len + 1) / 2);
    nright = len;
    for (let i = 1; i <= n; i++) {
      if (i > half && nright !== n) {
        nleft++;
        nright++;
      }
      put(i);
    }
  } else {
    const half = Math.floor((len + 1) / 2);
    for (let i = 1; i <= n; i += step) {
      if (i < half) {
        nleft = 1;
        nright = len;
      } else if (i >= n - half + 1) {
        nleft = n - len + 1;
        nright = n;
      } else {
        nleft = i - half + 1;
        nright = len + i - half;
      }
      put(i);
    }
  }
  if (step === 1) return;
  for (let i = 1; i <= n - step; i += step) {
    const delta = (ys[i + step - 1]! - ys[i - 1]!) / step;
    for (let j = i + 1; j < i + step; j++) ys[j - 1] = ys[i - 1]! + delta * (j - i);
  }
  const k = Math.floor((n - 1) / step) * step + 1;
  if (k !== n) {
    put(n);
    if (k !== n - 1) {
      const delta = (ys[n - 1]! - ys[k - 1]!) / (n - k);
      for (let j = k + 1; j < n; j++) ys[j - 1] = ys[k - 1]! + delta * (j - k);
    }
  }
}

/** Moving average of length len: out[0 .. n-len]. */
function movingAverage(x: Float64Array, n: number, len: number, out: Float64Array): void {
  let sum = 0;
  for (let i = 0; i < len; i++) sum += x[i]!;
  out[0] = sum / len;
  for (let i = 1; i <= n - len; i++) {
    sum += x[i + len - 1]! - x[i - 1]!;
    out[i] = sum / len;
  }
}

/**
 * Decomposes y (a regular series, no missing values) into seasonal + trend + remainder. The cycle-subseries
 * of slot j are the points j, j + period, ...: position 0 is slot 0.
 */
export function stl(y: ArrayLike<number>, options: StlOptions): StlResult {
  const n = y.length;
  const np = Math.round(options.period);
  if (np < 2) throw new Error('stl: the period must be at least 2');
  if (n < 2 * np) throw new Error('stl: the series must hold at least two periods');
  const ns = Math.max(3, nextOdd(options.seasonal));
  const nt = Math.max(3, nextOdd(options.trend ?? Math.ceil((1.5 * np) / (1 - 1.5 / ns))));
  const nl = Math.max(3, nextOdd(options.lowPass ?? np));
  const isdeg = options.seasonalDegree ?? 0;
  const itdeg = options.trendDegree ?? 1;
  const ildeg = options.lowPassDegree ?? itdeg;
  const nsjump = options.seasonalJump ?? Math.ceil(ns / 10);
  const ntjump = options.trendJump ?? Math.ceil(nt / 10);
  const nljump = options.lowPassJump ?? Math.ceil(nl / 10);
  const inner = options.inner ?? 2;

  const data = Float64Array.from(y);
  const trend = new Float64Array(n);
  const seasonal = new Float64Array(n);
  const extended = new Float64Array(n + 2 * np);
  const detrended = new Float64Array(n);
  const average1 = new Float64Array(n + np + 1);
  const average2 = new Float64Array(n + 2);
  const filtered = new Float64Array(n);
  const lowPass = new Float64Array(n);
  const deseasonalised = new Float64Array(n);
  const w = new Float64Array(n + 2 * np + 2);
  const cycles = Math.ceil(n / np);
  const sub = new Float64Array(cycles);
  const subSmooth = new Float64Array(cycles + 2);
  const subW = new Float64Array(cycles + 2);

  for (let pass = 0; pass < inner; pass++) {
    for (let i = 0; i < n; i++) detrended[i] = data[i]! - trend[i]!;
    // Cycle-subseries smoothing, each extended by one cycle at both ends (stlss).
    for (let j = 0; j < np; j++) {
      const k = Math.floor((n - 1 - j) / np) + 1;
      for (let i = 0; i < k; i++) sub[i] = detrended[i * np + j]!;
      const inside = subSmooth.subarray(1, k + 1);
      smooth(sub, k, ns, isdeg, nsjump, inside, subW);
      const before = estimate(sub, k, ns, isdeg, 0, 1, Math.min(ns, k), subW);
      subSmooth[0] = before ?? subSmooth[1]!;
      const after = estimate(sub, k, ns, isdeg, k + 1, Math.max(1, k - ns + 1), k, subW);
      subSmooth[k + 1] = after ?? subSmooth[k]!;
      for (let m = 0; m < k + 2; m++) extended[m * np + j] = subSmooth[m]!;
    }
    // Low-pass filter of the extended seasonal (stlfts: moving averages of np, np and 3, then stless).
    const m = n + 2 * np;
    movingAverage(extended, m, np, average1);
    movingAverage(average1, m - np + 1, np, average2);
    movingAverage(average2, m - 2 * np + 2, 3, filtered);
    smooth(filtered, n, nl, ildeg, nljump, lowPass, w);
    for (let i = 0; i < n; i++) {
      seasonal[i] = extended[np + i]! - lowPass[i]!;
      deseasonalised[i] = data[i]! - seasonal[i]!;
    }
    smooth(deseasonalised, n, nt, itdeg, ntjump, trend, w);
  }
  const remainder = new Float64Array(n);
  for (let i = 0; i < n; i++) remainder[i] = data[i]! - seasonal[i]! - trend[i]!;
  return { seasonal, trend, remainder };
}
