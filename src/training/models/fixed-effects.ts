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
import { mean } from '../stats/closed-forms.js';
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
    const my = mean(g.y);
    const mx = columnMeans(g.x, width);
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
const columnMeans = (rows: number[][], width: number) => Array.from({ length: width }, (_, j) => mean(rows.map((r) => r[j] as number)));

/**
 * A series' design in a round at any time: the drivers of that time's row and of the row a step before (a price's
 * effect may take a step to show; a known row, or in the final round a row to forecast), null where either is missing.
 */
function designOf(p: Prepared, s: RoundSeries, d: { known: (number | null)[][]; future: (number | null)[][] }, predict: number[], final: boolean): (time: number) => number[] | null {
  const known = new Map(s.time.map((t, i) => [t, i]));
  const future = new Map(final ? predict.map((t, k) => [t, k]) : []);
  const driversAt = (time: number): number[] | null => {
    const i = known.get(time);
    const row = i !== undefined ? d.known[i] : future.has(time) ? d.future[future.get(time) as number] : undefined;
    if (!row) return null;
    const x = driversOf(p, row);
    return x.every(Number.isFinite) ? x : null;
  };
  return (time) => {
    const now = driversAt(time);
    if (!now) return null;
    const before = driversAt(time - 1);
    return before ? [...now, ...before] : null;
  };
}

function describe(p: Prepared, drivers: PanelDrivers, form: string, slopes: number[], seriesCount: number): string {
  const named = [...p.columns.map((c, j) => ({ c, j, lag: '' })), ...p.columns.map((c, j) => ({ c, j, lag: ' a step earlier' }))];
  const effects = named.map(({ c, j, lag }, k) => {
    const name = `${drivers.columns[c] as string}${lag}`;
    const b = slopes[k] as number;
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
  const width = 2 * p.columns.length;
  const levelGroups: { x: number[][]; y: number[] }[] = [];
  const diffGroups: { x: number[][]; y: number[] }[] = [];
  const members: { s: number; design: (time: number) => number[] | null; last: { time: number; x: number[]; y: number } }[] = [];
  series.forEach((s, i) => {
    const cut = round.cut[i];
    const d = drivers.series[i];
    if (!p.taking[i] || cut === null || cut === undefined || !d) return;
    const design = designOf(p, s, d, round.predict[i] ?? [], final);
    const times: number[] = [];
    const x: number[][] = [];
    const y: number[] = [];
    s.time.forEach((t, r) => {
      const row = t <= cut ? design(t) : null;
      if (!row) return;
      times.push(t);
      x.push(row);
      y.push(valueOf(p, s.values[r] as number));
    });
    if (y.length === 0) return;
    members.push({ s: i, design, last: { time: times[times.length - 1] as number, x: x[x.length - 1] as number[], y: y[y.length - 1] as number } });
    levelGroups.push({ x, y });
    const dx: number[][] = [];
    const dy: number[] = [];
    for (let k = 1; k < y.length; k++) {
      if ((times[k] as number) - (times[k - 1] as number) !== 1) continue;
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
  members.forEach(({ s, design, last }, m) => {
    const lg = levelGroups[m] as { x: number[][]; y: number[] };
    const dg = diffGroups[m] as { x: number[][]; y: number[] };
    const meanY = mean(lg.y);
    const meanX = columnMeans(lg.x, width);
    const drift = diffSlopes && dg.y.length > 0 ? mean(dg.y) - dot(diffSlopes, columnMeans(dg.x, width)) : null;
    (round.predict[s] ?? []).forEach((time, k) => {
      const x = design(time);
      if (!x) return;
      if (levelSlopes) (levels[s] as number[])[k] = back(meanY + dot(levelSlopes, x.map((v, j) => v - (meanX[j] as number))));
      // The changes from the last known row add up to the drift's steps and the drivers' change since that row.
      if (diffSlopes && drift !== null) (diffs[s] as number[])[k] = back(last.y + (time - last.time) * drift + dot(diffSlopes, x.map((v, j) => v - (last.x[j] as number))));
    });
  });
  const count = members.length;
  const runs: FixedEffectsRun[] = [];
  if (levelSlopes) runs.push({ name: 'fixed_effects', predictions: levels, description: describe(p, drivers, 'levels, an intercept per series', levelSlopes, count) });
  if (diffSlopes) runs.push({ name: 'fixed_effects_diff', predictions: diffs, description: describe(p, drivers, 'changes, a drift per series', diffSlopes, count) });
  return runs;
}
