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
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';

/**
 * auto.arima's guard: a fit whose AR or MA polynomial has a root within this modulus of the unit circle is
 * not a candidate. Such a fit is a unit root the differencing did not take out (its forecasts run away, e.g.
 * AR1 + AR2 = 1.002 on US employment: +45,000 in a year) or an MA term that cannot be inverted.
 */
export const MIN_ROOT_MODULUS = 1.01;

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
 * Smallest modulus of the roots of the model's polynomials, each 1 - c1 z^l - ... - ck z^(kl) (the package
 * writes both AR and MA terms with a minus, Box-Jenkins style; a fitted MA(1) of e_t + 0.6 e_t-1 reads
 * MA1 = -0.6). The roots in w = z^l are the reciprocals of the companion matrix's eigenvalues, and |z| =
 * |w|^(1/l). NaN coefficients (a failed fit) count as a root on the circle.
 */
export function minRootModulus(c: Coefficients, season: number): number {
  let min = Number.POSITIVE_INFINITY;
  const check = (coefs: number[], lag: number) => {
    const k = coefs.length;
    if (k === 0) return;
    if (coefs.some((v) => !Number.isFinite(v))) {
      min = Math.min(min, 1);
      return;
    }
    const companion = Matrix.zeros(k, k);
    coefs.forEach((v, i) => companion.set(0, i, v));
    for (let i = 1; i < k; i++) companion.set(i, i - 1, 1);
    const eig = new EigenvalueDecomposition(companion);
    eig.realEigenvalues.forEach((re, i) => {
      const modulus = Math.hypot(re, eig.imaginaryEigenvalues[i]!);
      min = Math.min(min, modulus > 0 ? (1 / modulus) ** (1 / lag) : Number.POSITIVE_INFINITY);
    });
  };
  check(c.AR, 1);
  check(c.MA, 1);
  check(c.SAR, Math.max(1, season));
  check(c.SMA, Math.max(1, season));
  return min;
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
