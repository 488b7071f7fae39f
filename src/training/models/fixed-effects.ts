/**
 * The fixed-effects ("within") regression across a panel's series, the panel model every econometrics text
 * starts with: one intercept per series, common slopes on the known drivers (numeric covariates filled in the
 * rows to forecast), fitted on every series' known rows at once. A short annual series (14-30 rows) cannot tell
 * a driver's effect from its own trend; forty of them can.
 *
 * Two forms compete like any candidate (each series' own choice and the choice across series):
 *  - levels: y = a_s + x b; the forecast of a row is its series' intercept plus its drivers' effect;
 *  - differences: y_t - y_t-1 = m_s + (x_t - x_t-1) b; the forecast walks from the series' last value with its
 *    own drift and the drivers' changes since that value (what a random walk with drift plus drivers is).
 * Both in logarithms where the value is above zero in every known row of the panel (a driver too where it is above
 * zero everywhere): a common elasticity is the textbook assumption across series of different sizes, and percent
 * changes keep the largest series from owning the squared error. The slopes are ridge-regularised, the penalty
 * by generalised cross-validation on the within-transformed rows (linear.ts fitRidge).
 *
 * Like the global model, a round sees each series only up to its cut (panel/panel-part.ts runs one round per
 * backtest window, then the final one), and what a series keeps is its forecast (global-forecast.ts).
 */
import { fitRidge } from './linear.js';

/** A panel's known drivers, aligned with the global model's series: raw numbers per row, null where a cell is empty or not a number. */
export interface PanelDrivers {
  columns: string[];
  /** Per global series: a row per known time (the series' `time`) and a row per time to forecast (the final round's `predict`); null: none. */
  series: ({ known: (number | null)[][]; future: (number | null)[][] } | null)[];
}

/** What a round needs of each series: its known times and values (GlobalSeries). */
interface RoundSeries {
  time: number[];
  values: number[];
}

interface RoundCut {
  cut: (number | null)[];
  predict: number[][];
}

/** One form's round: a prediction per series (NaN where the series takes no part) and what was fitted. */
export interface FixedEffectsRun {
  name: 'fixed_effects' | 'fixed_effects_diff';
  predictions: number[][];
  description: string;
}

/** Fewest series with every driver known that make a common slope worth fitting. */
const MIN_SERIES = 2;

/** The drivers every taking-part series knows in every row (known and to forecast), and the series that know them. */
function usable(drivers: PanelDrivers): { columns: number[]; series: boolean[] } {
  const complete = (rows: (number | null)[][], c: number) => rows.every((r) => r[c] !== null && Number.isFinite(r[c] as number));
  const has = drivers.series.map((s) => drivers.columns.map((_, c) => s !== null && s.known.length > 0 && complete(s.known, c) && complete(s.future, c)));
  // A driver some series lack is used where at least half of the series (and two) know it; the others take no part.
  const columns = drivers.columns.map((_, c) => c).filter((c) => {
    const count = has.filter((h) => h[c]).length;
    return count >= MIN_SERIES && count * 2 >= drivers.series.length;
  });
  return { columns, series: has.map((h) => columns.length > 0 && columns.every((c) => h[c])) };
}

/** Whether a panel has drivers the fixed-effects regression can use. */
export const hasUsableDrivers = (drivers: PanelDrivers | undefined): boolean => drivers !== undefined && usable(drivers).series.filter(Boolean).length >= MIN_SERIES;

interface Prepared {
  columns: number[];
  taking: boolean[];
  logValue: boolean;
  logDriver: boolean[];
}

function prepare(series: RoundSeries[], drivers: PanelDrivers): Prepared | null {
  const { columns, series: taking } = usable(drivers);
  if (taking.filter(Boolean).length < MIN_SERIES) return null;
  const logValue = series.every((s, i) => !taking[i] || s.values.every((v) => v > 0));
  const logDriver = columns.map(
    (c) =>
      logValue &&
      drivers.series.every((s, i) => !taking[i] || (s !== null && [...s.known, ...s.future].every((r) => (r[c] as number) > 0))),
  );
  return { columns, taking, logValue, logDriver };
}

const valueOf = (p: Prepared, v: number) => (p.logValue ? Math.log(v) : v);
const driversOf = (p: Prepared, row: (number | null)[]) => p.columns.map((c, j) => (p.logDriver[j] ? Math.log(row[c] as number) : (row[c] as number)));

/** The slopes of within-transformed rows (each series' means taken out), per unit of the (logged) driver. */
function commonSlopes(groups: { x: number[][]; y: number[] }[], width: number): number[] | null {
  const x: number[][] = [];
  const y: number[] = [];
  for (const g of groups) {
    if (g.y.length < 2) continue;
    const my = g.y.reduce((a, b) => a + b, 0) / g.y.length;
    const mx = Array.from({ length: width }, (_, j) => g.x.reduce((a, r) => a + (r[j] as number), 0) / g.x.length);
    g.x.forEach((r, i) => {
      x.push(r.map((v, j) => v - (mx[j] as number)));
      y.push((g.y[i] as number) - my);
    });
  }
  if (y.length < 2 * (width + 1)) return null;
  const fit = fitRidge(x, y);
  return fit.beta.map((b, j) => ((fit.sds[j] as number) > 0 ? b / (fit.sds[j] as number) : 0));
}

const dot = (a: number[], b: number[]) => a.reduce((s, v, j) => s + v * (b[j] as number), 0);

/** The rows of a series up to its cut: their indices in its known rows. */
function rowsUpTo(s: RoundSeries, cut: number): number[] {
  const out: number[] = [];
  s.time.forEach((t, i) => {
    if (t <= cut) out.push(i);
  });
  return out;
}

/** The drivers of the row a round predicts at `time`: a known row's (a backtest window) or a row to forecast's (final). */
function driverRowAt(s: RoundSeries, d: { known: (number | null)[][]; future: (number | null)[][] }, time: number, k: number, final: boolean): (number | null)[] | undefined {
  if (final) return d.future[k];
  const i = s.time.indexOf(time);
  return i < 0 ? undefined : d.known[i];
}

function describe(p: Prepared, drivers: PanelDrivers, form: string, slopes: number[], seriesCount: number): string {
  const effects = p.columns.map((c, j) => {
    const name = drivers.columns[c] as string;
    const b = slopes[j] as number;
    const size = Number(b.toPrecision(3));
    if (p.logValue && p.logDriver[j]) return `${name} ${size} (elasticity: 1% more, ${size}% on the value)`;
    if (p.logValue) return `${name} ${size} (per unit: ${(100 * (Math.exp(b) - 1)).toPrecision(3)}% on the value)`;
    return `${name} ${size} per unit`;
  });
  return `fixed effects across ${seriesCount} series (${form}${p.logValue ? ', in logarithms' : ''}, common slopes): ${effects.join(', ')}`;
}

/**
 * Round `round` of both forms: fitted on every taking-part series' rows up to its cut, predicting its times to
 * predict. Null when the panel has no usable drivers or too few rows for them.
 */
export function runFixedEffectsRound(series: RoundSeries[], drivers: PanelDrivers, round: RoundCut, final: boolean): FixedEffectsRun[] | null {
  const p = prepare(series, drivers);
  if (!p) return null;
  const width = p.columns.length;
  const levelGroups: { x: number[][]; y: number[] }[] = [];
  const diffGroups: { x: number[][]; y: number[] }[] = [];
  const members: { s: number; rows: number[] }[] = [];
  series.forEach((s, i) => {
    const cut = round.cut[i];
    const d = drivers.series[i];
    if (!p.taking[i] || cut === null || cut === undefined || !d) return;
    const rows = rowsUpTo(s, cut);
    if (rows.length === 0) return;
    members.push({ s: i, rows });
    const x = rows.map((r) => driversOf(p, d.known[r] as (number | null)[]));
    const y = rows.map((r) => valueOf(p, s.values[r] as number));
    levelGroups.push({ x, y });
    const dx: number[][] = [];
    const dy: number[] = [];
    for (let k = 1; k < rows.length; k++) {
      if ((s.time[rows[k] as number] as number) - (s.time[rows[k - 1] as number] as number) !== 1) continue;
      dx.push((x[k] as number[]).map((v, j) => v - ((x[k - 1] as number[])[j] as number)));
      dy.push((y[k] as number) - (y[k - 1] as number));
    }
    diffGroups.push({ x: dx, y: dy });
  });
  if (members.length < MIN_SERIES) return null;
  const levelSlopes = commonSlopes(levelGroups, width);
  const diffSlopes = commonSlopes(diffGroups, width);
  const empty = () => series.map((_, i) => round.predict[i]?.map(() => NaN) ?? []);
  const levels = empty();
  const diffs = empty();
  const back = (v: number) => (p.logValue ? Math.exp(v) : v);
  members.forEach(({ s, rows }, m) => {
    const d = drivers.series[s] as { known: (number | null)[][]; future: (number | null)[][] };
    const series_ = series[s] as RoundSeries;
    const lg = levelGroups[m] as { x: number[][]; y: number[] };
    const dg = diffGroups[m] as { x: number[][]; y: number[] };
    const last = rows[rows.length - 1] as number;
    const lastX = lg.x[lg.x.length - 1] as number[];
    const lastY = lg.y[lg.y.length - 1] as number;
    const meanY = lg.y.reduce((a, b) => a + b, 0) / lg.y.length;
    const meanX = Array.from({ length: width }, (_, j) => lg.x.reduce((a, r) => a + (r[j] as number), 0) / lg.x.length);
    const drift =
      diffSlopes && dg.y.length > 0
        ? dg.y.reduce((a, b) => a + b, 0) / dg.y.length - dot(diffSlopes, Array.from({ length: width }, (_, j) => dg.x.reduce((a, r) => a + (r[j] as number), 0) / dg.x.length))
        : null;
    (round.predict[s] ?? []).forEach((time, k) => {
      const row = driverRowAt(series_, d, time, k, final);
      if (!row) return;
      const x = driversOf(p, row);
      if (x.some((v) => !Number.isFinite(v))) return;
      if (levelSlopes) (levels[s] as number[])[k] = back(meanY + dot(levelSlopes, x.map((v, j) => v - (meanX[j] as number))));
      if (diffSlopes && drift !== null) {
        const steps = time - (series_.time[last] as number);
        (diffs[s] as number[])[k] = back(lastY + steps * drift + dot(diffSlopes, x.map((v, j) => v - (lastX[j] as number))));
      }
    });
  });
  const count = members.length;
  const runs: FixedEffectsRun[] = [];
  if (levelSlopes) runs.push({ name: 'fixed_effects', predictions: levels, description: describe(p, drivers, 'levels, an intercept per series', levelSlopes, count) });
  if (diffSlopes) runs.push({ name: 'fixed_effects_diff', predictions: diffs, description: describe(p, drivers, 'changes, a drift per series', diffSlopes, count) });
  return runs;
}
