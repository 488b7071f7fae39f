/**
 * A real panel for the tests that train many series: vega-datasets' unemployment by industry (14 industries,
 * monthly from 2000), as one long upload keyed by industry.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** node_modules/vega-datasets/data (the package exports only build/index.js, one folder below). */
export const VEGA_DATA = join(dirname(createRequire(import.meta.url).resolve('vega-datasets')), '..', 'data');

interface Industry {
  series: string;
  year: number;
  month: number;
  count: number;
}

/** Every industry's name, in the data set's order. */
export function industryNames(): string[] {
  const all = JSON.parse(readFileSync(join(VEGA_DATA, 'unemployment-across-industries.json'), 'utf8')) as Industry[];
  return [...new Set(all.map((r) => r.series))];
}

/**
 * `names` industries, `months` months each from January 2002 (calm years), the last `hidden` of each left
 * empty; sorted by key then date. Answers the CSV and each industry's hidden values.
 */
export function industries(names: string[], months: number, hidden: number) {
  const all = JSON.parse(readFileSync(join(VEGA_DATA, 'unemployment-across-industries.json'), 'utf8')) as Industry[];
  const lines = ['industry,year,month,unemployed'];
  const truth = new Map<string, number[]>();
  for (const name of names) {
    const rows = all.filter((r) => r.series === name && r.year >= 2002).sort((a, b) => a.year - b.year || a.month - b.month).slice(0, months);
    rows.forEach((r, i) => lines.push(`${name},${r.year},${r.month},${i < months - hidden ? r.count : ''}`));
    truth.set(name, rows.slice(months - hidden).map((r) => r.count));
  }
  return { csv: `${lines.join('\n')}\n`, truth };
}

/**
 * A large panel for the tests of scale (not accuracy): `count` series of `months` months, series i being
 * industry i % 14 of January 2000 on, variant v = floor(i / 14) rotated by 12 x (v % 5) months (whole years,
 * so each month keeps its season) and scaled by 1 + v / 20, the last `hidden` months of each empty.
 */
export function repeatedIndustries(count: number, months: number, hidden: number): string {
  const all = JSON.parse(readFileSync(join(VEGA_DATA, 'unemployment-across-industries.json'), 'utf8')) as Industry[];
  const names = industryNames();
  const values = new Map(names.map((name) => [name, all.filter((r) => r.series === name).sort((a, b) => a.year - b.year || a.month - b.month).map((r) => r.count).slice(0, months)]));
  const lines = ['industry,year,month,unemployed'];
  for (let i = 0; i < count; i++) {
    const name = names[i % names.length] as string;
    const v = Math.floor(i / names.length);
    const base = values.get(name) as number[];
    for (let t = 0; t < months; t++) {
      const value = Math.round((base[(t + 12 * (v % 5)) % months] as number) * (1 + v / 20));
      lines.push(`${name} ${v},${2000 + Math.floor(t / 12)},${(t % 12) + 1},${t < months - hidden ? value : ''}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
