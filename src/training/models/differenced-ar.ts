/**
 * auto.arima's non-seasonal search without MA terms ('differenced_ar', numeric): ARIMA(p,d,0) on a
 * series without a cycle, d chosen as `differenced` chooses it (forecast::ndiffs: KPSS at 5%, max.d 2), then p
 * (0 to auto.arima's max.p of 5) and, at d = 1, a drift or none, by AICc on least squares over the same rows, as
 * auto.arima compares its candidates. A fit whose AR polynomial has a root within 1.01 of the unit circle is not
 * a candidate (auto.arima's guard, sarima-fit.ts MIN_ROOT_MODULUS). At d = 2 there is no constant, as
 * auto.arima allows a drift only where d <= 1.
 * What it adds to `differenced` (ARIMA(0,d,0), which it nests at p = 0) is the AR terms on the differences: a
 * growth that slows or speeds up (a country's population, whose second differences are autocorrelated) instead
 * of the last slope carried on. SARIMA's own search stops at d = 1 because d = 2 lost on single series (US
 * employment 79.4 -> 299, docs/benchmarks.md); here, as `differenced`, it competes only in the choice across a
 * panel's series (selection.ts POOLED_ONLY), so a single series never takes it. Least squares on at most
 * MAX_HISTORY steps: as cheap as the ridge families, so it runs in a panel of any size.
 * On the panels (docs/benchmarks.md): 214 countries' population 0.811 -> 0.702 mean MASE (R's auto.arima 0.652),
 * gapminder's population 0.568 -> 0.538, US population by age x sex 2.524 -> 2.494; none of the other 27 moved.
 */
import { Matrix, solve } from 'ml-matrix';
import type { FitRows, FittedModel, ModelFamily, PredictRows, SeriesInfo } from './model.js';
import { diff, gaussianAicc, mean, toGrid } from '../stats/closed-forms.js';
import { MIN_ROOT_MODULUS, smallestRootModulus } from '../stats/roots.js';
import { kpssDifferences } from '../stats/stationarity.js';

const MAX_HISTORY = 2000;
/** auto.arima's max.p. */
const MAX_P = 5;

export interface DifferencedArState {
  version: 1;
  d: number;
  /** Constant of the AR model of the differenced series (the mean at d = 0, the drift's share at d = 1). */
  c: number;
  phi: number[];
  /** The last values of the series on the grid (at least d + p of them), oldest first. */
  recent: number[];
  lastTime: number;
  start: number;
  /** One-step fitted values on the grid (start .. lastTime). */
  fitted: number[];
}

/** Coefficients of (1 - B)^d, lag 0 first. */
const differencing = (d: number) => (d === 0 ? [1] : d === 1 ? [1, -1] : [1, -2, 1]);

interface Candidate {
  aicc: number;
  c: number;
  phi: number[];
}

/** Least squares of z_t on [1?, z_t-1 .. z_t-p] over the rows t >= maxP (the same rows for every p), with its AICc. */
function fitOrder(z: number[], p: number, constant: boolean, maxP: number): Candidate | null {
  const rows: number[][] = [];
  const target: number[] = [];
  for (let t = maxP; t < z.length; t++) {
    rows.push([...(constant ? [1] : []), ...Array.from({ length: p }, (_, j) => z[t - 1 - j] as number)]);
    target.push(z[t] as number);
  }
  const k = (constant ? 1 : 0) + p;
  const m = rows.length;
  if (k === 0) return { aicc: gaussianAicc(target.reduce((s, v) => s + v * v, 0), m, 1), c: 0, phi: [] };
  let beta: number[];
  try {
    const x = new Matrix(rows);
    const xt = x.transpose();
    beta = solve(xt.mmul(x), xt.mmul(Matrix.columnVector(target))).to1DArray();
  } catch {
    return null;
  }
  if (beta.some((v) => !Number.isFinite(v))) return null;
  const c = constant ? (beta[0] as number) : 0;
  const phi = beta.slice(constant ? 1 : 0);
  if (p > 0 && smallestRootModulus(phi, 1) < MIN_ROOT_MODULUS) return null;
  const sse = rows.reduce((s, row, i) => s + ((target[i] as number) - row.reduce((a, v, j) => a + v * (beta[j] as number), 0)) ** 2, 0);
  return { aicc: gaussianAicc(sse, m, k + 1), c, phi };
}

/** The one-step value at grid step t from the values before it: the AR model of the differences, integrated. */
function oneStep(values: number[], t: number, d: number, c: number, phi: number[]): number {
  const poly = differencing(d);
  const z = (s: number) => poly.reduce((sum, a, j) => sum + a * (values[s - j] as number), 0);
  let next = c;
  phi.forEach((f, j) => (next += f * z(t - 1 - j)));
  for (let j = 1; j <= d; j++) next -= (poly[j] as number) * (values[t - j] as number);
  return next;
}

function fit(rows: FitRows): DifferencedArState {
  const { start, series } = toGrid(rows.time.map(Math.round), rows.target as number[], MAX_HISTORY);
  const n = series.length;
  const d = n >= 3 ? kpssDifferences(series) : 0;
  let z = series;
  for (let k = 0; k < d; k++) z = diff(z, 1);
  const maxP = Math.max(0, Math.min(MAX_P, Math.floor((z.length - 3) / 4)));
  let best: Candidate = { aicc: Infinity, c: d === 0 ? mean(series) : 0, phi: [] };
  for (let p = 0; p <= maxP; p++) {
    for (const constant of d === 0 ? [true] : d === 1 ? [false, true] : [false]) {
      const candidate = fitOrder(z, p, constant, maxP);
      if (candidate && candidate.aicc < best.aicc) best = candidate;
    }
  }
  const { c, phi } = best;
  const history = d + phi.length;
  const fitted = series.map((v, t) => (t < history ? (t === 0 ? v : (series[t - 1] as number)) : oneStep(series, t, d, c, phi)));
  return { version: 1, d, c, phi, recent: series.slice(-Math.max(1, history)), lastTime: start + n - 1, start, fitted };
}

function forecast(state: DifferencedArState, steps: number): number[] {
  const values = [...state.recent];
  for (let k = 0; k < steps; k++) values.push(oneStep(values, values.length, state.d, state.c, state.phi));
  return values.slice(state.recent.length);
}

function revive(state: DifferencedArState): FittedModel<DifferencedArState> {
  if (state.version !== 1 || !Array.isArray(state.fitted) || !Array.isArray(state.phi)) throw new Error('differenced_ar: unsupported stored state');
  return {
    state,
    predict(rows: PredictRows) {
      const furthest = Math.max(state.lastTime, ...rows.time.map(Math.round));
      const ahead = forecast(state, furthest - state.lastTime);
      return rows.time.map((t) => {
        const time = Math.round(t);
        if (time <= state.lastTime) return state.fitted[Math.max(0, time - state.start)] as number;
        return ahead[time - state.lastTime - 1] as number;
      });
    },
    describe: () => `ARIMA(${state.phi.length},${state.d},0)${state.d === 1 && state.c !== 0 ? ' with drift' : ''}, d by KPSS, p by AICc`,
  };
}

export const differencedArFamily: ModelFamily<DifferencedArState> = {
  name: 'differenced_ar',
  kind: 'numeric',
  traits: { tried: 'pooled', acrossSeriesOnly: true },
  applies: (info: SeriesInfo, n) => info.timeOrdered && info.periods.length === 0 && n >= 2,
  cost: () => 1,
  fit: (rows) => revive(fit(rows)),
  revive,
};
