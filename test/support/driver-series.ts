/**
 * Real uploads with known drivers (covariates filled in the rows to forecast), for the tests of the families that
 * model them: vega-datasets' unemployed persons by industry with each industry's unemployment rate (annual means,
 * a panel of 14 series), and miles driven per person in the US with the real price of gas (one series).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VEGA_DATA } from './industries.js';

export interface DriverUpload {
  csv: string;
  /** Rows to forecast, in upload order: their key (empty for one series) and year. */
  future: { key: string; year: number }[];
}

/**
 * Unemployed persons (thousands) by industry, annual means 2000-2009, with the industry's unemployment rate
 * (percent): the last `hidden` years of each industry to forecast, their rates filled in, times `rateScale` (a
 * user's scenario). `withRate` false leaves the column out.
 */
export function unemployedByIndustry(hidden: number, options: { rateScale?: number; withRate?: boolean } = {}): DriverUpload {
  const { rateScale = 1, withRate = true } = options;
  const all = JSON.parse(readFileSync(join(VEGA_DATA, 'unemployment-across-industries.json'), 'utf8')) as { series: string; year: number; count: number; rate: number }[];
  const sums = new Map<string, { industry: string; year: number; count: number; rate: number; months: number }>();
  for (const r of all) {
    const key = `${r.series}|${r.year}`;
    const s = sums.get(key) ?? { industry: r.series, year: r.year, count: 0, rate: 0, months: 0 };
    s.count += r.count;
    s.rate += r.rate;
    s.months += 1;
    sums.set(key, s);
  }
  const years = [...sums.values()].filter((s) => s.months === 12).sort((a, b) => a.industry.localeCompare(b.industry) || a.year - b.year);
  const last = Math.max(...years.map((s) => s.year));
  const future: DriverUpload['future'] = [];
  const lines = years.map((s) => {
    const hide = s.year > last - hidden;
    if (hide) future.push({ key: s.industry, year: s.year });
    const rate = (s.rate / 12) * (hide ? rateScale : 1);
    return [s.industry, s.year, ...(withRate ? [rate.toFixed(2)] : []), hide ? '' : (s.count / 12).toFixed(1)].join(',');
  });
  return { csv: `industry,year,${withRate ? 'rate,' : ''}unemployed\n${lines.join('\n')}\n`, future };
}

/** Miles driven per person by year with the real gas price (dollars of 2010), up to `last`, the last `hidden` years' miles empty and their gas price plus `gasShift`. */
export function milesWithGas(last: number, hidden: number, gasShift = 0): DriverUpload {
  const records = (JSON.parse(readFileSync(join(VEGA_DATA, 'driving.json'), 'utf8')) as { year: number; miles: number; gas: number }[])
    .filter((r) => r.year <= last)
    .sort((a, b) => a.year - b.year);
  const future: DriverUpload['future'] = [];
  const lines = records.map((r, i) => {
    const hide = i >= records.length - hidden;
    if (hide) future.push({ key: '', year: r.year });
    return `${r.year},${(r.gas + (hide ? gasShift : 0)).toFixed(3)},${hide ? '' : r.miles}`;
  });
  return { csv: `year,gas,miles\n${lines.join('\n')}\n`, future };
}

/**
 * Monthly mean maximum temperature in Seattle and New York, 2012-2015 (vega-datasets weather.csv), with the month's
 * mean minimum temperature, total precipitation and mean wind: the last `hidden` months of each city to forecast,
 * their weather filled in (a weather scenario).
 */
export function monthlyWeather(hidden: number): DriverUpload {
  const [head, ...lines] = readFileSync(join(VEGA_DATA, 'weather.csv'), 'utf8').trim().split(/\r?\n/);
  const names = (head as string).split(',');
  const months = new Map<string, { location: string; month: string; max: number; min: number; precipitation: number; wind: number; days: number }>();
  for (const line of lines) {
    const r = Object.fromEntries(line.split(',').map((v, i) => [names[i] as string, v]));
    const month = (r.date as string).slice(0, 7);
    const key = `${r.location as string}|${month}`;
    const m = months.get(key) ?? { location: r.location as string, month, max: 0, min: 0, precipitation: 0, wind: 0, days: 0 };
    m.max += Number(r.temp_max);
    m.min += Number(r.temp_min);
    m.precipitation += Number(r.precipitation);
    m.wind += Number(r.wind);
    m.days += 1;
    months.set(key, m);
  }
  const rows = [...months.values()].sort((a, b) => a.location.localeCompare(b.location) || a.month.localeCompare(b.month));
  const count = new Map<string, number>();
  for (const m of rows) count.set(m.location, (count.get(m.location) ?? 0) + 1);
  const seen = new Map<string, number>();
  const future: DriverUpload['future'] = [];
  const out = rows.map((m) => {
    const k = (seen.get(m.location) ?? 0) + 1;
    seen.set(m.location, k);
    const hide = k > (count.get(m.location) as number) - hidden;
    if (hide) future.push({ key: m.location, year: Number(m.month.slice(0, 4)) });
    return [m.location, `${m.month}-01`, (m.min / m.days).toFixed(2), m.precipitation.toFixed(1), (m.wind / m.days).toFixed(2), hide ? '' : (m.max / m.days).toFixed(2)].join(',');
  });
  return { csv: `location,date,temp_min,precipitation,wind,temp_max\n${out.join('\n')}\n`, future };
}
