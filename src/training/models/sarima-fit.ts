/**
 * The `arima` npm package (ctsa compiled to WebAssembly: exact maximum likelihood, L-BFGS; no native build) as
 * the SARIMA family uses it: one fit of given orders (with its AIC, exit message and smallest polynomial root)
 * and the forecast of a fitted instance. The order search (sarima-search.ts) and the family (sarima.ts) reach
 * the package only through here.
 *
 * The package writes to stdout when verbose and on some failures; we instantiate its WASM module ourselves
 * with `print`/`printErr` captured, which both silences it and gives us the AIC and the exit message of each
 * fit (verbose summary), the only way the package reports them.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { diff, lineThrough, mean } from '../stats/closed-forms.js';
import { MIN_ROOT_MODULUS, smallestRootModulus } from '../stats/roots.js';

export interface SarimaOrders {
  p: number;
  d: number;
  q: number;
  P: number;
  D: number;
  Q: number;
  /** Season used by the seasonal terms; 0 when the model is not seasonal. */
  s: number;
  /** Drift regressor (time index) included. */
  drift: boolean;
  /**
   * The drift trends too (regressors t and t^2/n, n the fitted length: the differenced series' mean moves
   * linearly with time). Absent in models stored before it existed.
   */
  trendingDrift?: boolean;
}

// ---------------------------------------------------------------------------------------------------------
// The WASM module, instantiated once per thread with its output captured.

/** The package's options: the orders (the drift is our exogenous regressor, not an option) and the fit method. */
interface ArimaOptions extends Omit<SarimaOrders, 'drift' | 'trendingDrift'> {
  transpose?: boolean;
  method?: number;
  optimizer?: number;
  verbose?: boolean;
}
export interface ArimaInstance {
  train(ts: number[], exog?: number[] | number[][]): ArimaInstance;
  predict(length: number, exog?: number[] | number[][]): [number[], number[]];
  destroy(): void;
}
type ArimaConstructor = new (options: ArimaOptions) => ArimaInstance;

interface ArimaRuntime {
  ARIMA: ArimaConstructor;
  /** Lines printed by the module since the last drain. */
  drain(): string[];
}

let runtime: ArimaRuntime | undefined;

function arimaRuntime(): ArimaRuntime {
  if (runtime) return runtime;
  const require = createRequire(import.meta.url);
  // The package's index.js builds its module with console output; its parts are plain files we can load
  // ourselves (the package's `exports` map hides them from bare subpath requires, not from absolute paths).
  const dir = path.dirname(require.resolve('arima'));
  const makeModule = require(path.join(dir, 'wasm', 'native-sync.js')) as (opts: Record<string, unknown>) => unknown;
  const wasmBinary = require(path.join(dir, 'wrapper', 'native.bin.js')) as unknown;
  const load = require(path.join(dir, 'load.js')) as (module: unknown) => ArimaConstructor;
  let lines: string[] = [];
  const capture = (text: unknown): void => {
    lines.push(String(text));
    if (lines.length > 10_000) lines = lines.slice(-1000);
  };
  const module = makeModule({ wasmBinary, print: capture, printErr: capture });
  runtime = {
    ARIMA: load(module),
    drain() {
      const out = lines;
      lines = [];
      return out;
    },
  };
  return runtime;
}

export interface FitOutcome {
  model: ArimaInstance;
  aic: number;
  ok: boolean;
  message: string;
  /** Smallest root modulus of the fitted AR/MA polynomials (minRootModulus). */
  roots: number;
}

export function fitOnce(series: number[], o: SarimaOrders): FitOutcome {
  const rt = arimaRuntime();
  rt.drain();
  // The drift goes in as a regressor, not as a package option.
  const { drift: _drift, trendingDrift, ...orders } = o;
  // Two regressors go in as one row per step (the package's `transpose`).
  const model = new rt.ARIMA({ ...orders, method: 0, optimizer: 6, verbose: true, transpose: trendingDrift === true });
  try {
    const exog = regressors(o, 0, series.length, series.length);
    if (exog) model.train(series, exog);
    else model.train(series);
  } catch (error) {
    model.destroy();
    rt.drain();
    throw error;
  }
  const out = rt.drain();
  const aicLine = out.find((l) => l.includes('AIC criterion'));
  const aic = aicLine ? Number(aicLine.split(':')[1]) : Number.NaN;
  const exit = out.find((l) => l.includes('Exit Message')) ?? '';
  const message = exit.split(':').slice(1).join(':').trim();
  // ctsa flags non-stationary / non-invertible fits and input errors in its exit message, but not roots
  // next to the unit circle: those are checked on the coefficients of its summary.
  const roots = minRootModulus(coefficientsOf(out), o.s);
  const ok = Number.isFinite(aic) && !/nonstationary|error|fail/i.test(message) && roots >= MIN_ROOT_MODULUS;
  return { model, aic, ok, message, roots };
}

type Coefficients = Record<'AR' | 'MA' | 'SAR' | 'SMA', number[]>;

/** The AR/MA coefficients of the package's verbose summary ("AR1   0.28   0.07"), in lag order. */
export function coefficientsOf(lines: string[]): Coefficients {
  const out: Coefficients = { AR: [], MA: [], SAR: [], SMA: [] };
  for (const line of lines) {
    const match = /^\s*(AR|MA|SAR|SMA)(\d+)\s+(\S+)/.exec(line);
    if (match) out[match[1] as keyof Coefficients][Number(match[2]) - 1] = Number(match[3]);
  }
  return out;
}

/**
 * Smallest modulus of the roots of the model's polynomials (the package writes both AR and MA terms with a
 * minus, Box-Jenkins style; a fitted MA(1) of e_t + 0.6 e_t-1 reads MA1 = -0.6); the seasonal ones in z^season.
 */
export function minRootModulus(c: Coefficients, season: number): number {
  const lag = Math.max(1, season);
  return Math.min(smallestRootModulus(c.AR, 1), smallestRootModulus(c.MA, 1), smallestRootModulus(c.SAR, lag), smallestRootModulus(c.SMA, lag));
}

/**
 * The exogenous regressors at steps from..from+count-1 of a history n steps long: t for a drift, [t, t^2/n]
 * for a trending drift, none otherwise. The fit and the forecast both take them from here.
 */
function regressors(o: SarimaOrders, from: number, count: number, n: number): number[] | number[][] | undefined {
  if (o.trendingDrift) return Array.from({ length: count }, (_, i) => [from + i, ((from + i) * (from + i)) / n]);
  if (o.drift) return Array.from({ length: count }, (_, i) => from + i);
  return undefined;
}

export function forecastOnce(model: ArimaInstance, o: SarimaOrders, n: number, steps: number): number[] {
  const rt = arimaRuntime();
  const [values] = model.predict(steps, regressors(o, n, steps, n));
  rt.drain();
  return values;
}

/** The package forecasts these without the series' level, so their forecast is noiseOnlyForecast's. */
export const noiseOnly = (o: SarimaOrders) => o.p + o.q + o.P + o.Q === 0;

/**
 * Forecasts of a model without AR or MA terms, (1-B)^d (1-B^s)^D y_t = c + e_t: the package fits these but
 * forecasts them without the series' level (zeros, or the drift line through the origin: a test shows it),
 * so they are computed here. c is the mean of the differenced series when the model has a drift (or a mean,
 * d+D = 0), the least-squares line through it when the drift trends, and 0 otherwise; future noise is 0.
 */
export function noiseOnlyForecast(series: number[], o: SarimaOrders, steps: number): number[] {
  let poly = [1];
  const times = (factor: number[]) => {
    const out = new Array<number>(poly.length + factor.length - 1).fill(0);
    poly.forEach((a, i) => factor.forEach((b, j) => (out[i + j] = out[i + j]! + a * b)));
    poly = out;
  };
  for (let k = 0; k < o.d; k++) times([1, -1]);
  if (o.s > 0) for (let k = 0; k < o.D; k++) times([1, ...new Array<number>(o.s - 1).fill(0), -1]);
  const order = poly.length - 1;
  let differenced = series;
  for (let k = 0; k < o.d; k++) differenced = diff(differenced, 1);
  if (o.s > 0) for (let k = 0; k < o.D; k++) differenced = diff(differenced, o.s);
  const c = (o.drift || order === 0) && differenced.length > 0 ? mean(differenced) : 0;
  // The differenced value at step t of the series is differenced[t - order].
  const drift = o.trendingDrift ? lineThrough(differenced) : { at: () => c };
  const values = [...series];
  for (let k = 0; k < steps; k++) {
    const t = values.length;
    let next = drift.at(t - order);
    for (let j = 1; j <= order; j++) next -= poly[j]! * values[t - j]!;
    values.push(next);
  }
  return values.slice(series.length);
}
