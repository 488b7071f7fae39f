/**
 * The sub-daily jobs' time and memory end to end (issue 28 targets: 4,000 half-hourly rows a week ahead
 * <= 15 s, 100,000 five-minute rows <= 90 s, peak RSS within the training memory budget). A real service
 * (src/server.ts, one training thread, a fresh Postgres database) takes each upload through POST /data to
 * status 3; the wall time runs from the upload's reply to the finished job, and the peak RSS is the service
 * process's (VmHWM, the training thread included). The same run times Mauna Loa CO2 (741 months, 36
 * ahead) as the baseline the ratios are taken against.
 *  - real: departures per half hour (vega-datasets 1.31.1 flights-3m.csv), 11 weeks known and 1 ahead: 4,032 rows;
 *  - timing only: 100,000 five-minute rows made here (a daily and a weekly shape plus noise, 1,000 empty
 *    at the end), since no package ships that many real five-minute rows; its forecast is not scored.
 *
 *   npm run bench subdaily-time        or   npx tsx bench/forecast/subdaily-time.ts
 */
import { readFileSync } from 'node:fs';
import { startService, stopService, type BenchService } from '../service.js';
import { freshDatabase } from '../support.js';
import { flightsHalfHourly, SETS, type ForecastSet } from './datasets.js';
import { forecastThroughService } from './run.js';

function fiveMinute(rows: number, empty: number): ForecastSet {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const start = Date.UTC(2020, 0, 6);
  const header = ['timestamp', 'value'];
  const body: string[][] = [];
  const hidden: number[] = [];
  const y: number[] = [];
  for (let i = 0; i < rows; i++) {
    const d = new Date(start + i * 300_000);
    const hour = d.getUTCHours() + d.getUTCMinutes() / 60;
    const weekend = d.getUTCDay() === 0 || d.getUTCDay() === 6;
    const v = Number(((weekend ? 60 : 100) + 30 * Math.sin((2 * Math.PI * (hour - 8)) / 24) + 10 * (rand() - 0.5)).toFixed(2));
    y.push(v);
    if (i >= rows - empty) hidden.push(i);
    body.push([d.toISOString().slice(0, 19).replace('T', ' '), i >= rows - empty ? '' : String(v)]);
  }
  return {
    id: 'timing.five_minute_100k', label: '100,000 five-minute rows (made for timing)', task: 'regression', target: 'value', numeric: [], categorical: [],
    time: null, header, rows: body, hidden, truth: hidden.map((i) => y[i]!), y, decimals: 2, inputs: {},
  };
}

const peakRss = (service: BenchService) => {
  const status = readFileSync(`/proc/${service.child.pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
};

export async function benchSubdailyTime() {
  const cases = [SETS.co2!(), flightsHalfHourly(11), fiveMinute(100_000, 1_000)];
  const db = await freshDatabase('bench_subdaily_time');
  try {
    const lines: string[] = [];
    let baseline = 0;
    for (const set of cases) {
      // A service per case, so each peak RSS is that job's.
      const service = await startService(db.url, { workers: 1, tz: 'UTC' });
      try {
        const ours = await forecastThroughService(service, set);
        if (set.id === 'co2') baseline = ours.wallMs;
        const rows = set.rows.length;
        lines.push(`| ${set.label} | ${rows} | ${set.hidden.length} | ${(ours.wallMs / 1000).toFixed(1)} s | ${(ours.wallMs / baseline).toFixed(1)}x | ${peakRss(service).toFixed(0)} MB | ${ours.model} |`);
        console.log(lines.at(-1));
      } finally {
        await stopService(service);
      }
    }
    console.log('\n| upload | rows | ahead | job wall | / CO2 job | service peak RSS | model |\n|---|---:|---:|---:|---:|---:|---|');
    for (const line of lines) console.log(line);
  } finally {
    await db.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSubdailyTime();
