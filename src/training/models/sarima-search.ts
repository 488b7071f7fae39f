/**
 * The SARIMA family's order selection, after Hyndman & Khandakar's auto.arima, restricted to small orders:
 *  - the seasonal difference D (0/1) from the seasonal strength of the series (STL-like, Fs > 0.64), only
 *    when the season is 2..MAX_SEASON and at least two seasons are there;
 *  - the difference d (0/1) from a KPSS level-stationarity test (5%) on the seasonally differenced series;
 *  - (p,q,P,Q) in {0,1,2}x{0,1,2}x{0,1}x{0,1} by auto.arima's stepwise search on its default criterion,
 *    AICc (only compared between models with the same d and D, as it must be; plain AIC was used at first
 *    and measured worse, docs/benchmarks.md, forecast), at most MAX_FITS fits (and one for the trending
 *    drift below). The start models are auto.arima's except its (2,d,2)(1,D,1), replaced by (1,d,1)(0,D,1):
 *    that one fit alone can take 10 s on 600 steps, and the stepwise moves still reach it when it is better;
 *  - a drift (the exogenous regressor `t`, which the package differences with the series) when d+D = 1, so a
 *    trend is extrapolated, kept only where AICc prefers it, as auto.arima toggles its constant: a start model
 *    (0,d,0)(0,D,0) without it and a move that flips it (one more fit in each search, so the ARMA moves keep
 *    their number). Always on, it carried a walk's mean step on where auto.arima takes none (the daily
 *    temperatures of three cities, a stock's open, high, low and close); measured over four forecast origins
 *    of the 32 panels and on the corpus (docs/benchmarks.md, panels). With d+D = 0 the package fits a mean;
 *    with d+D = 2 neither makes sense;
 *  - then, for the chosen orders with a drift, a drift that itself trends (regressors t and t^2: a linear
 *    trend in the differences, statsmodels' trend='t' with d = 1, or trend='ct' before differencing), kept
 *    only when a likelihood-ratio test finds it at the 5% level, as the KPSS test decides d. AIC alone (any
 *    gain) was measured and rejected: it took the term on 10 of 58 real series and made 6 of them worse
 *    (unemployment's 2000-2009 crisis onset read as an acceleration); the 5% test takes it on 3 (global
 *    temperature since 1880, two infant mortality rates), all better (docs/benchmarks.md, forecast).
 * The package's own auto mode was tried and rejected: on US nonfarm employment it picked a non-seasonal model
 * (MAE 299-410 against 180 for this search) and it is up to 6x slower on the CO2 series.
 */
import { chooseDifferencing } from '../stats/stationarity.js';
import type { FitContext } from './model.js';
import { fitOnce, type ArimaInstance, type FitOutcome, type SarimaOrders } from './sarima-fit.js';

/** Hard cap on the number of ARIMA fits during order selection. */
export const MAX_FITS = 13;
/** Backtest fits only rank the family: a shorter stepwise search (the start models, one without the drift, and two moves). */
export const MAX_BACKTEST_FITS = 7;
const MAX_P = 2;
const MAX_Q = 2;
const MAX_SP = 1;
const MAX_SQ = 1;
/**
 * AIC gain that the trending drift's one extra parameter must bring: the likelihood-ratio statistic
 * 2 * (logL1 - logL0) = AIC0 - AIC1 + 2 must exceed chi-square(1)'s 5% point, 3.841.
 */
const TRENDING_DRIFT_MIN_AIC_GAIN = 3.841 - 2;

function key(o: SarimaOrders): string {
  return `${o.p},${o.q},${o.P},${o.Q},${o.drift ? 1 : 0}`;
}

function inBounds(o: SarimaOrders): boolean {
  return o.p >= 0 && o.q >= 0 && o.P >= 0 && o.Q >= 0 && o.p <= MAX_P && o.q <= MAX_Q && o.P <= MAX_SP && o.Q <= MAX_SQ;
}

/** auto.arima's stepwise neighbourhood: each order +-1, and p/q and P/Q together. */
function neighbours(o: SarimaOrders): SarimaOrders[] {
  const out: SarimaOrders[] = [];
  const moves: Array<[number, number, number, number]> = [
    [1, 0, 0, 0], [-1, 0, 0, 0], [0, 1, 0, 0], [0, -1, 0, 0],
    [1, 1, 0, 0], [-1, -1, 0, 0],
  ];
  if (o.s > 0) moves.push([0, 0, 1, 0], [0, 0, -1, 0], [0, 0, 0, 1], [0, 0, 0, -1], [0, 0, 1, 1], [0, 0, -1, -1]);
  for (const [dp, dq, dP, dQ] of moves) {
    const n = { ...o, p: o.p + dp, q: o.q + dq, P: o.P + dP, Q: o.Q + dQ };
    if (inBounds(n)) out.push(n);
  }
  if (o.d + o.D === 1) out.push({ ...o, drift: !o.drift });
  return out;
}

interface Candidate {
  orders: SarimaOrders;
  aic: number;
  /** AICc, what the order search minimises. */
  aicc: number;
  /** The fitted instance of the best model so far (the others are destroyed at once). */
  model: ArimaInstance;
}

function minLength(o: SarimaOrders): number {
  // The package's own guard (train throws below it).
  return o.d + o.s * o.D + Math.max(o.p + o.q, 2 * o.s, 10);
}

/**
 * AICc as forecast::Arima computes it: the parameters are the ARMA coefficients, the drift or mean, and the
 * noise variance; the observations are those left after differencing.
 */
export function aiccOf(aic: number, o: SarimaOrders, steps: number): number {
  const parameters = o.p + o.q + o.P + o.Q + (o.drift || o.d + o.D === 0 ? 1 : 0) + (o.trendingDrift ? 1 : 0) + 1;
  const observations = steps - o.d - o.s * o.D;
  const room = observations - parameters - 1;
  return room > 0 ? aic + (2 * parameters * (parameters + 1)) / room : Number.POSITIVE_INFINITY;
}

export function selectOrders(series: number[], season: number, ctx: FitContext): Candidate {
  const { d, D, s } = chooseDifferencing(series, season);
  const base: SarimaOrders = { p: 0, d, q: 0, P: 0, D: s > 0 ? D : 0, Q: 0, s, drift: d + (s > 0 ? D : 0) === 1 };
  const starts: SarimaOrders[] =
    s > 0
      ? [
          { ...base },
          { ...base, p: 1, P: 1 },
          { ...base, q: 1, Q: 1 },
          { ...base, p: 1, q: 1, Q: 1 },
        ]
      : [{ ...base }, { ...base, p: 1 }, { ...base, q: 1 }, { ...base, p: 2, q: 2 }];
  if (base.drift) starts.push({ ...base, drift: false });
  const tried = new Map<string, number>();
  let best: Candidate | undefined;
  let fits = 0;
  const maxFits = ctx.final === false ? MAX_BACKTEST_FITS : MAX_FITS;
  const consider = (o: SarimaOrders): boolean => {
    const k = key(o);
    if (tried.has(k) || fits >= maxFits) return false;
    if (series.length < minLength(o)) {
      tried.set(k, Number.POSITIVE_INFINITY);
      return false;
    }
    fits++;
    let outcome: FitOutcome | undefined;
    try {
      outcome = fitOnce(series, o);
    } catch {
      // A fit the package refuses is simply not a candidate.
    }
    const aicc = outcome?.ok ? aiccOf(outcome.aic, o, series.length) : Number.POSITIVE_INFINITY;
    tried.set(k, aicc);
    ctx.progress(Math.min(0.95, fits / maxFits));
    // Ties go to the model tried first (the simpler start models come early), keeping the search deterministic.
    if (outcome && Number.isFinite(aicc) && (!best || aicc < best.aicc - 1e-9)) {
      best?.model.destroy();
      best = { orders: o, aic: outcome.aic, aicc, model: outcome.model };
      return true;
    }
    outcome?.model.destroy();
    return false;
  };
  for (const o of starts) consider(o);
  let improved = best !== undefined;
  while (improved && fits < maxFits) {
    improved = false;
    for (const n of neighbours(best!.orders)) {
      if (consider(n)) {
        improved = true;
        break;
      }
    }
  }
  if (!best) throw new Error(`sarima: no ARIMA model could be fitted (d=${d}, D=${D}, season=${s}, ${series.length} steps)`);
  return best.orders.drift ? withTrendingDrift(series, best) : best;
}

/** The chosen orders with a trending drift instead, when the likelihood-ratio test keeps it (one more fit). */
function withTrendingDrift(series: number[], best: Candidate): Candidate {
  const orders = { ...best.orders, trendingDrift: true };
  let outcome: FitOutcome | undefined;
  try {
    outcome = fitOnce(series, orders);
  } catch {
    return best;
  }
  if (!outcome.ok || !(best.aic - outcome.aic > TRENDING_DRIFT_MIN_AIC_GAIN)) {
    outcome.model.destroy();
    return best;
  }
  best.model.destroy();
  return { orders, aic: outcome.aic, aicc: aiccOf(outcome.aic, orders, series.length), model: outcome.model };
}
