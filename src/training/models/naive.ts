/**
 * The naive family: the forecasts a spreadsheet user tries first, and the bar every other candidate must
 * clear in the backtest. With T the last fitted time, s the season and h = t - T:
 *  naive           y(T)
 *  seasonal_naive  the latest fitted value of the same season slot (t mod s), i.e. y(T + h - k s)
 *  seasonal_naive_long  the same for the longest period when the data has several (half-hourly: a week
 *                  ago, 336 steps; hourly 168; daily a year, 365): the baseline every load forecaster beats
 *  drift           y(T) + h * slope, slope = (y(T) - y(first)) / (T - first)
 *  seasonal_drift  seasonal naive + slope * (t - time of that slot's value)
 *  mean            mean of the fitted values (with median, the numeric ones for tabular data)
 *  median          median of the fitted values: the constant with the least absolute error, which is what
 *                  the backtest scores (MAE); on skewed targets (delays, disaster deaths) it beats the mean
 *  season_mean     mean of the fitted values of the same slot
 *  majority        the most frequent class (categorical; ties by name)
 * Rows at or before T get the same formulas (there is no in-sample state beyond these figures).
 */
import { diff } from '../stats/closed-forms.js';
import { isSeasonal, levelStationary, MAX_TESTED_SEASON } from '../stats/stationarity.js';
import { longestPeriod, type FamilyTraits, type FitRows, type FittedModel, type ModelFamily, type PredictRows, type SeriesInfo } from './model.js';

type NaiveName = 'naive' | 'seasonal_naive' | 'seasonal_naive_long' | 'drift' | 'seasonal_drift' | 'mean' | 'median' | 'season_mean';

interface NaiveState {
  lastTime: number;
  last: number;
  slope: number;
  mean: number;
  /** Only the median family's fit sorts the values for it; null in the other families' states. */
  median: number | null;
  season: number;
  /** Latest value and its time per season slot, and the slot means (length = season). */
  slotValues: number[];
  slotTimes: number[];
  slotMeans: number[];
}

const slotOf = (t: number, s: number) => ((Math.round(t) % s) + s) % s;

function summarise(rows: FitRows, season: number, withMedian: boolean): NaiveState {
  const y = rows.target as number[];
  const t = rows.time;
  const n = y.length;
  const last = y[n - 1] as number;
  const lastTime = t[n - 1] as number;
  const span = lastTime - (t[0] as number);
  const slope = span > 0 ? (last - (y[0] as number)) / span : 0;
  const mean = y.reduce((a, b) => a + b, 0) / n;
  const slotValues = new Array<number>(season).fill(last);
  const slotTimes = new Array<number>(season).fill(lastTime);
  const sums = new Array<number>(season).fill(0);
  const counts = new Array<number>(season).fill(0);
  for (let i = 0; i < n; i++) {
    const k = slotOf(t[i] as number, season);
    slotValues[k] = y[i] as number;
    slotTimes[k] = t[i] as number;
    sums[k] = (sums[k] as number) + (y[i] as number);
    counts[k] = (counts[k] as number) + 1;
  }
  const slotMeans = sums.map((sum, k) => ((counts[k] as number) > 0 ? sum / (counts[k] as number) : mean));
  const median = withMedian ? medianOf(y) : null;
  return { lastTime, last, slope, mean, median, season, slotValues, slotTimes, slotMeans };
}

export function medianOf(y: number[]): number {
  const sorted = Float64Array.from(y).sort();
  const n = sorted.length;
  return n % 2 === 1 ? (sorted[(n - 1) / 2] as number) : ((sorted[n / 2 - 1] as number) + (sorted[n / 2] as number)) / 2;
}

const FORMULAS: Record<NaiveName, (s: NaiveState, t: number) => number> = {
  naive: (s) => s.last,
  seasonal_naive: (s, t) => s.slotValues[slotOf(t, s.season)] as number,
  seasonal_naive_long: (s, t) => s.slotValues[slotOf(t, s.season)] as number,
  drift: (s, t) => s.last + s.slope * (t - s.lastTime),
  seasonal_drift: (s, t) => {
    const k = slotOf(t, s.season);
    return (s.slotValues[k] as number) + s.slope * (t - (s.slotTimes[k] as number));
  },
  mean: (s) => s.mean,
  median: (s) => s.median as number,
  season_mean: (s, t) => s.slotMeans[slotOf(t, s.season)] as number,
};

const DESCRIPTIONS: Record<NaiveName, (s: NaiveState) => string> = {
  naive: () => 'last value',
  seasonal_naive: (s) => `seasonal naive (season ${s.season})`,
  seasonal_naive_long: (s) => `seasonal naive (season ${s.season})`,
  drift: () => 'last value + drift',
  seasonal_drift: (s) => `seasonal naive + drift (season ${s.season})`,
  mean: () => 'mean',
  median: () => 'median',
  season_mean: (s) => `mean per season slot (season ${s.season})`,
};

type Admits = NonNullable<ModelFamily['admits']>;

function naiveFamily(name: NaiveName, baseline: FamilyTraits['baseline'], applies: (info: SeriesInfo, rows: number) => boolean, admits?: Admits): ModelFamily<NaiveState> {
  const revive = (state: NaiveState): FittedModel<NaiveState> => ({
    state,
    predict: (rows: PredictRows) => rows.time.map((t) => FORMULAS[name](state, t)),
    describe: () => DESCRIPTIONS[name](state),
  });
  return {
    name,
    kind: 'numeric',
    // One pass over the rows: a panel of any size tries every one.
    traits: { baseline, panelCost: 'cheap' },
    applies,
    ...(admits ? { admits } : {}),
    cost: () => 1,
    fit: (rows, ctx) => revive(summarise(rows, seasonOf(name, ctx.info), name === 'median')),
    revive,
  };
}

const seasonal = (info: SeriesInfo) => info.timeOrdered && info.season > 1;
const longest = (info: SeriesInfo) => Math.round(longestPeriod(info));

function seasonOf(name: NaiveName, info: SeriesInfo): number {
  if (name === 'mean' || name === 'median') return 1;
  return Math.max(1, name === 'seasonal_naive_long' ? longest(info) : info.season);
}

/**
 * A constant of the whole history forecasts a level with noise; on a series that trends or wanders it wins only where
 * its few windows happen to meet the history's mean. So it needs the KPSS test (at 5%) not to reject a level.
 */
const keepsLevel: Admits = (values) => levelStationary(values);

/**
 * Whether a series' first differences show its season by the M4 test (stats/stationarity.ts isSeasonal); true where the test
 * cannot tell: a season beyond its 60 steps (sub-daily data) or fewer than two seasons of differences. The calendar
 * gives every business-daily series a week of 5 and every monthly one a year of 12; a price that walks has neither,
 * and there last week's or last year's value is the last value plus noise.
 */
const showsSeason: Admits = (values, info) => {
  const differences = diff(values, 1);
  return info.season > MAX_TESTED_SEASON || differences.length < 2 * info.season || isSeasonal(differences, info.season);
};

export const naiveFamilies: ModelFamily[] = [
  naiveFamily('naive', 'last', (info, n) => info.timeOrdered && n >= 1),
  naiveFamily('seasonal_naive', 'season', (info, n) => seasonal(info) && n >= info.season, showsSeason),
  naiveFamily('seasonal_naive_long', 'season', (info, n) => info.timeOrdered && info.periods.length > 1 && n >= longest(info)),
  naiveFamily('drift', 'last', (info, n) => info.timeOrdered && n >= 2),
  naiveFamily('seasonal_drift', 'season', (info, n) => seasonal(info) && n >= info.season + 2, showsSeason),
  naiveFamily('mean', 'level', (_info, n) => n >= 1, keepsLevel),
  naiveFamily('median', 'level', (_info, n) => n >= 1, keepsLevel),
  naiveFamily('season_mean', 'level', (info, n) => seasonal(info) && n >= 2 * info.season, (values, info) => keepsLevel(values, info) && showsSeason(values, info)),
] as ModelFamily[];

interface MajorityState {
  label: string;
}

export const majorityFamily: ModelFamily<MajorityState> = {
  name: 'majority',
  kind: 'categorical',
  traits: { baseline: 'level', panelCost: 'cheap' },
  applies: (_info, n) => n >= 1,
  cost: () => 1,
  fit(rows) {
    const counts = new Map<string, number>();
    for (const label of rows.target as string[]) counts.set(label, (counts.get(label) ?? 0) + 1);
    const [label] = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0] as [string, number];
    return this.revive({ label });
  },
  revive: (state) => ({
    state,
    predict: (rows) => rows.time.map(() => state.label),
    describe: () => `majority class '${state.label}'`,
  }),
};

/** Names of the baseline families (FamilyTraits.baseline), every one of them this file's: what a report ranks by name. */
export const NAIVE_NAMES: ReadonlySet<string> = new Set([...naiveFamilies, majorityFamily].filter((f) => f.traits?.baseline !== undefined).map((f) => f.name));
