/**
 * ARMA(p, q) by Hannan-Rissanen, p <= MAX_AR, q <= MAX_MA by AICc: a long autoregression gives the
 * innovations, then least squares on lagged values and lagged innovations. Closed form, JSON coefficients, O(n)
 * per candidate; orders whose AR part is not stationary or MA part not invertible are skipped, so a forecast
 * decays to zero. The harmonic regression models its errors with it; the SARIMA family fits by likelihood
 * through the `arima` package instead (models/sarima-fit.ts), which keeps no coefficients a stored model could
 * forecast from.
 */
import { gaussianAicc } from './closed-forms.js';
import { leastSquares } from './least-squares.js';
import { MIN_ROOT_MODULUS, smallestRootModulus } from './roots.js';

export const MAX_AR = 3;
export const MAX_MA = 2;

/** What an ARMA forecast starts from: the last errors and innovations, newest last. */
export interface ArmaMemory {
  lastErrors: number[];
  lastInnovations: number[];
}

const aicc = (n: number, rss: number, k: number) => gaussianAicc(rss, n, k);

/** Every root of 1 - c1 z - ... - cp z^p lies outside MIN_ROOT_MODULUS. */
const rootsOutside = (c: number[]) => smallestRootModulus(c, 1) >= MIN_ROOT_MODULUS;

export interface Arma {
  ar: number[];
  ma: number[];
}

/** Innovations of an ARMA over the series (zeros before the first max(p, q) steps) and one-step values. */
export function innovationsOf(e: Float64Array, model: Arma): { innovations: Float64Array; oneStep: Float64Array } {
  const p = model.ar.length;
  const q = model.ma.length;
  const innovations = new Float64Array(e.length);
  const oneStep = new Float64Array(e.length);
  for (let t = 0; t < e.length; t++) {
    let v = 0;
    for (let i = 1; i <= p; i++) v += t - i >= 0 ? model.ar[i - 1]! * e[t - i]! : 0;
    for (let j = 1; j <= q; j++) v += t - j >= 0 ? model.ma[j - 1]! * innovations[t - j]! : 0;
    oneStep[t] = v;
    innovations[t] = e[t]! - v;
  }
  return { innovations, oneStep };
}

export function fitArma(e: Float64Array, maxAr = MAX_AR, maxMa = MAX_MA): Arma {
  const n = e.length;
  const longOrder = Math.min(40, Math.max(MAX_AR + MAX_MA, Math.ceil(10 * Math.log10(Math.max(n, 10)))), Math.floor(n / 5));
  const from = longOrder + Math.max(MAX_AR, MAX_MA);
  if (longOrder < MAX_AR + MAX_MA || n - from < 20) return { ar: [], ma: [] };
  // Stage 1: a long autoregression's residuals stand for the innovations (not needed without MA terms).
  const lagged = (series: Float64Array, lag: number, start: number) => series.subarray(start - lag, n - lag);
  const innovations = new Float64Array(n);
  if (maxMa > 0) {
    const long = leastSquares(
      Array.from({ length: longOrder }, (_, j) => lagged(e, j + 1, longOrder)),
      e.subarray(longOrder),
    );
    if (!long) return { ar: [], ma: [] };
    for (let t = longOrder; t < n; t++) {
      let v = e[t]!;
      for (let j = 1; j <= longOrder; j++) v -= long.beta[j - 1]! * e[t - j]!;
      innovations[t] = v;
    }
  }
  // Stage 2: every (p, q) on the same sample, by AICc.
  const y = e.subarray(from);
  const count = y.length;
  let best: Arma = { ar: [], ma: [] };
  let bestScore = Infinity;
  for (let p = 0; p <= maxAr; p++) {
    for (let q = 0; q <= maxMa; q++) {
      const columns = [...Array.from({ length: p }, (_, i) => lagged(e, i + 1, from)), ...Array.from({ length: q }, (_, j) => lagged(innovations, j + 1, from))];
      const fit = leastSquares(columns, y);
      if (!fit) continue;
      const model = { ar: fit.beta.slice(0, p), ma: fit.beta.slice(p) };
      // The MA polynomial is 1 + theta1 z + ...: its roots are those of 1 - (-theta) z - ...
      if (!rootsOutside(model.ar) || !rootsOutside(model.ma.map((v) => -v))) continue;
      const score = aicc(count, fit.rss, p + q + 1);
      if (score < bestScore - 1e-9) {
        bestScore = score;
        best = model;
      }
    }
  }
  return best;
}

/** The ARMA's forecast of the error 1..steps ahead from the stored last errors and innovations. */
export function armaPath(state: Arma & ArmaMemory, steps: number): number[] {
  const errors = state.lastErrors.slice();
  const innovations = state.lastInnovations.slice();
  const path: number[] = [];
  for (let h = 1; h <= steps; h++) {
    let v = 0;
    state.ar.forEach((c, i) => (v += c * (errors[errors.length - 1 - i] ?? 0)));
    state.ma.forEach((c, j) => (v += c * (innovations[innovations.length - 1 - j] ?? 0)));
    path.push(v);
    errors.push(v);
    innovations.push(0);
  }
  return path;
}
