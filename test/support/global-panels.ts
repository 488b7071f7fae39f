/**
 * Real public panels (many series keyed by an id) from the `vega-datasets` npm package, never generated, for
 * the global model across series: test/unit/global-model.test.ts and histogram-boosting.test.ts check on them.
 * Each series' last h values are held out.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GlobalSeries } from '../../src/training/models/global.js';
import { DATA_DIR } from '../../bench/forecast/datasets.js';

export interface Panel {
  id: string;
  label: string;
  season: number;
  h: number;
  series: { key: string; time: number[]; values: number[] }[];
}

export const readCsv = (file: string) => {
  const [head, ...lines] = readFileSync(join(DATA_DIR, file), 'utf8').trim().split(/\r?\n/);
  const names = head!.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((v, i) => [names[i]!, v])));
};
const readJson = <T>(file: string) => JSON.parse(readFileSync(join(DATA_DIR, file), 'utf8')) as T[];

/** Groups rows into series by key, sorted by time; `time` is the step on a shared axis. */
export function group<R>(rows: R[], key: (r: R) => string, time: (r: R) => number, value: (r: R) => number): Panel['series'] {
  const map = new Map<string, { t: number; v: number }[]>();
  for (const r of rows) {
    const v = value(r);
    if (!Number.isFinite(v)) continue;
    const list = map.get(key(r)) ?? [];
    list.push({ t: time(r), v });
    map.set(key(r), list);
  }
  return [...map.entries()].map(([k, list]) => {
    list.sort((a, b) => a.t - b.t);
    return { key: k, time: list.map((p) => p.t), values: list.map((p) => p.v) };
  });
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const monthStep = (year: number, month: number) => year * 12 + (month - 1);
export const dayStep = (iso: string) => Math.round(Date.parse(`${iso.slice(0, 10)}T00:00:00Z`) / 86_400_000);

export function panels(): Panel[] {
  const out: Panel[] = [];
  type Unemp = { series: string; year: number; month: number; count: number };
  out.push({
    id: 'unemployment',
    label: 'unemployment across 14 industries, monthly counts',
    season: 12,
    h: 12,
    series: group(readJson<Unemp>('unemployment-across-industries.json'), (r) => r.series, (r) => monthStep(r.year, r.month), (r) => r.count),
  });
  const emp = readCsv('us-employment.csv');
  const sectors = Object.keys(emp[0]!).filter((c) => c !== 'month');
  out.push({
    id: 'us-employment',
    label: `US employment, ${sectors.length} sectors, monthly`,
    season: 12,
    h: 12,
    series: sectors.map((c) => ({
      key: c,
      time: emp.map((r) => monthStep(Number(r.month!.slice(0, 4)), Number(r.month!.slice(5, 7)))),
      values: emp.map((r) => Number(r[c])),
    })),
  });
  out.push({
    id: 'stocks',
    label: 'stocks, 5 symbols, monthly close',
    season: 12,
    h: 12,
    series: group(
      readCsv('stocks.csv'),
      (r) => r.symbol!,
      (r) => {
        const [mon, , year] = r.date!.split(' ');
        return monthStep(Number(year), MONTHS.indexOf(mon!) + 1);
      },
      (r) => Number(r.price),
    ),
  });
  out.push({
    id: 'iowa',
    label: 'Iowa electricity, 3 sources, annual',
    season: 1,
    h: 4,
    series: group(readCsv('iowa-electricity.csv'), (r) => r.source!, (r) => Number(r.year!.slice(0, 4)), (r) => Number(r.net_generation)),
  });
  type Gap = { country: string; year: number; life_expect: number; fertility: number; pop: number };
  const gap = readJson<Gap>('gapminder.json');
  for (const v of ['life_expect', 'fertility'] as const) {
    out.push({
      id: `gapminder-${v}`,
      label: `gapminder ${v}, 62 countries, every 5 years`,
      season: 1,
      h: 2,
      series: group(gap, (r) => r.country, (r) => (r.year - 1955) / 5, (r) => r[v]),
    });
  }
  out.push({
    id: 'disasters',
    label: 'deaths by natural disaster type, annual (gaps)',
    season: 1,
    h: 6,
    series: group(readCsv('disasters.csv'), (r) => r.Entity!, (r) => Number(r.Year), (r) => Number(r.Deaths)),
  });
  type Pop = { year: number; age: number; sex: number; people: number };
  out.push({
    id: 'population',
    label: 'US population by age group and sex, every 10 years',
    season: 1,
    h: 2,
    series: group(readJson<Pop>('population.json'), (r) => `${r.age}-${r.sex}`, (r) => (r.year - 1850) / 10, (r) => r.people),
  });
  type Job = { job: string; sex: string; year: number; count: number };
  out.push({
    id: 'jobs',
    label: 'US jobs by title and sex, every 10 years',
    season: 1,
    h: 2,
    series: group(readJson<Job>('jobs.json'), (r) => `${r.job}-${r.sex}`, (r) => (r.year - 1850) / 10, (r) => r.count),
  });
  const weather = readCsv('weather.csv');
  out.push({
    id: 'weather',
    label: 'daily weather, 2 cities x 4 measures',
    season: 7,
    h: 14,
    series: ['temp_max', 'temp_min', 'wind', 'precipitation'].flatMap((m) =>
      group(weather, (r) => `${r.location}-${m}`, (r) => dayStep(r.date!), (r) => Number(r[m])),
    ),
  });
  type Crimea = { date: string; wounds: number; other: number; disease: number };
  const crimea = readJson<Crimea>('crimea.json');
  out.push({
    id: 'crimea',
    label: 'Crimean war deaths by cause, monthly',
    season: 12,
    h: 6,
    series: (['wounds', 'other', 'disease'] as const).map((c) => ({
      key: c,
      time: crimea.map((r) => monthStep(Number(r.date.slice(0, 4)), Number(r.date.slice(5, 7)))),
      values: crimea.map((r) => r[c]),
    })),
  });
  return out;
}

export interface Split {
  train: GlobalSeries;
  future: number[];
  truth: number[];
}

/** The last h values of each series held out (series with fewer than h + 3 values are left out). */
export function splitPanel(p: Panel): Split[] {
  return p.series
    .filter((s) => s.values.length >= p.h + 3)
    .map((s) => {
      const n = s.values.length - p.h;
      return { train: { time: s.time.slice(0, n), values: s.values.slice(0, n) }, future: s.time.slice(n), truth: s.values.slice(n) };
    });
}

export function maseScale(values: number[], season: number): number {
  const m = season > 1 && values.length > 2 * season ? season : 1;
  let sum = 0;
  for (let i = m; i < values.length; i++) sum += Math.abs((values[i] as number) - (values[i - m] as number));
  return sum / Math.max(1, values.length - m);
}

const mae = (a: number[], b: number[]) => a.reduce((s, v, i) => s + Math.abs(v - (b[i] as number)), 0) / a.length;

/** Mean MASE over the series whose scale is positive. */
export function meanMase(splits: Split[], season: number, forecasts: number[][]): number {
  let sum = 0;
  let n = 0;
  splits.forEach((s, i) => {
    const scale = maseScale(s.train.values, season);
    if (!(scale > 0)) return;
    sum += mae(forecasts[i] as number[], s.truth) / scale;
    n++;
  });
  return sum / n;
}

export function naive(s: Split): number[] {
  return s.truth.map(() => s.train.values[s.train.values.length - 1] as number);
}
export function seasonalNaive(s: Split, season: number): number[] {
  const { time, values } = s.train;
  // The value one season (or whole seasons) before each target time, from the known values by time.
  const byTime = new Map(time.map((t, i) => [t, values[i] as number]));
  return s.future.map((t) => {
    let back = t - season;
    while (back > (time[time.length - 1] as number)) back -= season;
    return byTime.get(back) ?? (values[values.length - 1] as number);
  });
}

