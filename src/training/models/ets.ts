/**
 * Exponential smoothing ('ets', numeric): the additive-error ETS models of Hyndman et al. (2008)
 * that the M3/M4 benchmarks and statsmodels' ETSModel / R's forecast::ets fit, chosen by AICc:
 *   ETS(A,N,N) simple exponential smoothing, ETS(A,A,N) Holt, ETS(A,Ad,N) damped trend,
 *   and the same three with an additive season (A,N,A), (A,A,A), (A,Ad,A) when the series has a season of
 *   2..MAX_SEASON steps and at least two seasons plus two points.
 *
 * Each form's smoothing parameters (alpha, beta, gamma, phi) and initial level and trend are estimated by
 * maximum likelihood, which for additive errors is least squares of the one-step errors, by Nelder-Mead
 * (simplex.ts) over an unconstrained reparametrisation that keeps 0 < beta < alpha < 1,
 * 0 < gamma < 1 - alpha and 0.8 <= phi <= 0.98 (forecast::ets's usual region). Initial seasonal states come
 * from the first two seasons (deviations from their means), as in ets's heuristic start, and are counted in
 * AICc's parameters as ets counts them. AICc = n log(SSE/n) + 2k + 2k(k+1)/(n-k-1).
 *
 * The fitted history is the last MAX_HISTORY steps on the full integer grid (gaps interpolated, as SARIMA's).
 * Forecast h steps after the last fitted time T: l + (phi + ... + phi^h) b + s(slot of T+h). Rows at or
 * before T get the stored one-step fitted value.
 */
import type { FitContext, FitRows, FittedModel, ModelFamily, PredictRows, SeriesInfo } from './model.js';
import { gaussianAicc, gridOf, lineThrough } from '../stats/closed-forms.js';
import { nelderMead } from './simplex.js';

const MAX_SEASON = 60;
/** Fitted history: the last steps only, so a long upload costs as much as this one. */
export const MAX_HISTORY = 2000;
/**
 * Rows an ETS fit needs: five leave simple exponential smoothing (alpha and l0) two degrees of freedom, and each
 * richer form joins where AICc's own bound n > k + 1 lets it (Holt at six, damped at seven, formsFor + fitForm).
 * Eight shut ETS out of every window of a short series' backtest (an annual or census panel of 9 to 15 values),
 * where R's ets fits; with five: US population by age x sex 2.81 -> 2.61 mean MASE
 * (docs/benchmarks.md, panels).
 */
const MIN_ROWS = 5;
const PHI_LOW = 0.8;
const PHI_HIGH = 0.98;

export type Trend = 'none' | 'additive' | 'damped';

export interface EtsForm {
  trend: Trend;
  seasonal: boolean;
}

export interface EtsState {
  version: 1;
  form: EtsForm;
  alpha: number;
  beta: number;
  gamma: number;
  phi: number;
  season: number;
  /** States after the last fitted step. */
  level: number;
  slope: number;
  /** Seasonal state per slot (time mod season); empty without a season. */
  seasonals: number[];
  lastTime: number;
  start: number;
  /** One-step fitted values on the grid (start .. lastTime). */
  fitted: number[];
  sigma2: number;
  aicc: number;
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
const logit = (p: number) => Math.log(p / (1 - p));
const slotOf = (t: number, s: number) => ((Math.round(t) % s) + s) % s;

interface Params {
  alpha: number;
  beta: number;
  gamma: number;
  phi: number;
  l0: number;
  b0: number;
}

interface Run {
  sse: number;
  level: number;
  slope: number;
  seasonals: number[];
  fitted: number[];
}

/** One pass of the recursions (error correction form) over the series. */
function filter(y: number[], start: number, form: EtsForm, m: number, p: Params, initialSeasonals: number[], keepFitted: boolean): Run {
  let level = p.l0;
  let slope = form.trend === 'none' ? 0 : p.b0;
  const phi = form.trend === 'damped' ? p.phi : 1;
  const seasonals = form.seasonal ? initialSeasonals.slice() : [];
  const fitted: number[] = keepFitted ? new Array<number>(y.length) : [];
  let sse = 0;
  for (let i = 0; i < y.length; i++) {
    const k = form.seasonal ? slotOf(start + i, m) : 0;
    const s = form.seasonal ? (seasonals[k] as number) : 0;
    const trendPart = phi * slope;
    const forecast = level + trendPart + s;
    const e = (y[i] as number) - forecast;
    if (keepFitted) fitted[i] = forecast;
    sse += e * e;
    level = level + trendPart + p.alpha * e;
    if (form.trend !== 'none') slope = trendPart + p.beta * e;
    if (form.seasonal) seasonals[k] = s + p.gamma * e;
  }
  return { sse, level, slope, seasonals, fitted };
}

/** How many parameters AICc counts: smoothing parameters, phi, and the initial states. */
function parameterCount(form: EtsForm, m: number): number {
  let k = 2; // alpha, l0
  if (form.trend !== 'none') k += 2; // beta, b0
  if (form.trend === 'damped') k += 1;
  if (form.seasonal) k += 1 + (m - 1); // gamma and the free initial seasonal states
  return k;
}

/** Initial states from the first seasons (or the first ten points): where the optimiser starts. */
function startingStates(y: number[], start: number, form: EtsForm, m: number): { l0: number; b0: number; seasonals: number[] } {
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  if (!form.seasonal) {
    const line = lineThrough(y.slice(0, Math.min(10, y.length)));
    const b0 = line.slope;
    return { l0: line.at(0) - (form.trend === 'none' ? 0 : b0), b0, seasonals: [] };
  }
  const first = y.slice(0, m);
  const second = y.slice(m, 2 * m);
  const m1 = mean(first);
  const m2 = mean(second);
  const b0 = (m2 - m1) / m;
  const seasonals = new Array<number>(m).fill(0);
  for (let i = 0; i < 2 * m; i++) {
    const base = i < m ? m1 + b0 * (i - (m - 1) / 2) : m2 + b0 * (i - m - (m - 1) / 2);
    const k = slotOf(start + i, m);
    seasonals[k] = (seasonals[k] as number) + ((y[i] as number) - base) / 2;
  }
  const offset = mean(seasonals);
  return { l0: m1 - b0 * ((m - 1) / 2 + 1), b0, seasonals: seasonals.map((s) => s - offset) };
}

interface FormFit {
  form: EtsForm;
  params: Params;
  run: Run;
  aicc: number;
}

function fitForm(y: number[], start: number, form: EtsForm, m: number): FormFit {
  const n = y.length;
  const init = startingStates(y, start, form, m);
  const scale = Math.max(1e-9, Math.sqrt(y.reduce((a, v) => a + (v - (y[0] as number)) ** 2, 0) / n)) || 1;
  // Unconstrained coordinates, all 0 at the start: logits of alpha, beta/alpha, gamma/(1-alpha), phi's
  // place in [PHI_LOW, PHI_HIGH], then the initial level and slope as offsets in units of the series' spread.
  const a0 = logit(0.3);
  const decode = (x: number[]): Params => {
    const alpha = 1e-4 + (1 - 2e-4) * sigmoid(a0 + (x[0] as number));
    const beta = form.trend === 'none' ? 0 : alpha * (1e-4 + (1 - 2e-4) * sigmoid(logit(0.1) + (x[1] as number)));
    const gamma = form.seasonal ? (1 - alpha) * (1e-4 + (1 - 2e-4) * sigmoid(logit(0.1) + (x[2] as number))) : 0;
    const phi = form.trend === 'damped' ? PHI_LOW + (PHI_HIGH - PHI_LOW) * sigmoid(x[3] as number) : 1;
    return { alpha, beta, gamma, phi, l0: init.l0 + scale * (x[4] as number), b0: init.b0 + (scale / Math.max(1, m)) * (x[5] as number) };
  };
  // Coordinates a form does not use stay fixed at 0 (they are left out of the simplex).
  const used = [0, ...(form.trend !== 'none' ? [1] : []), ...(form.seasonal ? [2] : []), ...(form.trend === 'damped' ? [3] : []), 4, ...(form.trend !== 'none' ? [5] : [])];
  const full = (u: number[]) => {
    const x = [0, 0, 0, 0, 0, 0];
    used.forEach((j, i) => (x[j] = u[i] as number));
    return x;
  };
  const objective = (u: number[]) => {
    const sse = filter(y, start, form, m, decode(full(u)), init.seasonals, false).sse;
    return Number.isFinite(sse) ? n * Math.log(Math.max(sse, 1e-300) / n) : 1e300;
  };
  const best = nelderMead(objective, used.map(() => 0), { maxIterations: 150 * used.length, step: 0.5, tolerance: 1e-9 });
  const params = decode(full(best.x));
  const run = filter(y, start, form, m, params, init.seasonals, true);
  const k = parameterCount(form, m);
  const aicc = gaussianAicc(run.sse, n, k);
  return { form, params, run, aicc };
}

export function formsFor(info: Pick<SeriesInfo, 'season'>, n: number): EtsForm[] {
  const seasonal = info.season >= 2 && info.season <= MAX_SEASON && n >= 2 * info.season + 2;
  const trends: Trend[] = ['none', 'additive', 'damped'];
  return [...trends.map((trend) => ({ trend, seasonal: false })), ...(seasonal ? trends.map((trend) => ({ trend, seasonal: true })) : [])];
}

/** Fits every form on the series and keeps the lowest AICc (the first form on ties: the simplest). */
export function fitEts(y: number[], start: number, season: number, forms: EtsForm[], progress: (share: number) => void = () => {}): EtsState {
  let best: FormFit | null = null;
  forms.forEach((form, i) => {
    const fit = fitForm(y, start, form, season);
    if (!best || fit.aicc < best.aicc) best = fit;
    progress((i + 1) / forms.length);
  });
  const chosen = best as FormFit | null;
  if (!chosen || !Number.isFinite(chosen.run.sse)) throw new Error('ets: no form could be fitted');
  const n = y.length;
  const k = parameterCount(chosen.form, season);
  return {
    version: 1,
    form: chosen.form,
    alpha: chosen.params.alpha,
    beta: chosen.params.beta,
    gamma: chosen.params.gamma,
    phi: chosen.params.phi,
    season: chosen.form.seasonal ? season : 1,
    level: chosen.run.level,
    slope: chosen.run.slope,
    seasonals: chosen.run.seasonals,
    lastTime: start + n - 1,
    start,
    fitted: chosen.run.fitted,
    sigma2: chosen.run.sse / Math.max(1, n - k),
    aicc: chosen.aicc,
  };
}

/** Forecast h >= 1 steps after the last fitted time. */
export function etsForecast(state: EtsState, h: number): number {
  const { form } = state;
  let damp = 0;
  if (form.trend === 'additive') damp = h;
  else if (form.trend === 'damped') for (let j = 1, p = state.phi; j <= h; j++, p *= state.phi) damp += p;
  const s = form.seasonal ? (state.seasonals[slotOf(state.lastTime + h, state.season)] as number) : 0;
  return state.level + damp * state.slope + s;
}

const TREND_NAMES = { none: 'simple exponential smoothing', additive: 'Holt linear trend', damped: 'damped trend' } as const;

/** Whether a fit's description (describeEts) is of a damped trend: one of the simple references of series/evidence.ts. */
export const describesDampedTrend = (description: string) => description.includes(`) ${TREND_NAMES.damped}`);

export function describeEts(state: EtsState): string {
  const trend = state.form.trend === 'none' ? 'N' : state.form.trend === 'additive' ? 'A' : 'Ad';
  const names = TREND_NAMES;
  const seasonal = state.form.seasonal ? `, additive season ${state.season}` : '';
  const phi = state.form.trend === 'damped' ? `, phi ${state.phi.toFixed(2)}` : '';
  return `ETS(A,${trend},${state.form.seasonal ? 'A' : 'N'}) ${names[state.form.trend]}${seasonal} (alpha ${state.alpha.toFixed(2)}${phi}), by AICc`;
}

function revive(state: EtsState): FittedModel<EtsState> {
  return {
    state,
    describe: () => describeEts(state),
    predict(rows: PredictRows): number[] {
      return rows.time.map((time) => {
        const t = Math.round(time);
        if (t > state.lastTime) return etsForecast(state, t - state.lastTime);
        return state.fitted[Math.max(0, t - state.start)] as number;
      });
    },
  };
}

export const etsFamily: ModelFamily<EtsState> = {
  name: 'ets',
  kind: 'numeric',
  traits: { panelCost: 'cheap' },
  applies: (info, n) => info.timeOrdered && n >= MIN_ROWS,
  cost: (info, n) => Math.max(2, Math.round((formsFor(info, n).length * Math.min(n, MAX_HISTORY)) / 200)),
  fit(rows: FitRows, ctx: FitContext) {
    const { start, series } = gridOf(rows, 'ets', MAX_HISTORY);
    return revive(fitEts(series, start, ctx.info.season, formsFor(ctx.info, series.length), (share) => ctx.progress(share)));
  },
  revive(state) {
    if (state.version !== 1) throw new Error('ets: unsupported stored state');
    return revive(state);
  },
};
