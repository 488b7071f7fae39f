/**
 * Sub-daily forecasts against R's and statsmodels' answers (issue 28): the corpus's hourly, half-hourly and
 * 15-minute series (datasets.ts subDailySets: flights, GitHub activity, temperature normals; a week ahead of
 * the last 8 known weeks, 4 for quarter hours) forecast by ours, in-process (trainModel, as
 * BENCH_CORPUS_INPROCESS=1) and through a real service (as corpus.ts), next to, in the same run and on the
 * same known rows:
 *  - the seasonal naive of each period (naive.ts: a day ago, a week ago);
 *  - Hyndman's forecast package for R (peers.R): stlf (mstl + ets), stlf with auto.arima, auto.arima with
 *    fourier() regressors (K per period by AICc), tbats, and its snaive of each period (a check on naive.ts);
 *  - statsmodels (peers.py, sub-daily branch): STL + ETS, STL + ARIMA, SARIMAX with Fourier terms.
 * Scored by MASE: the MAE over the in-sample MAE of the seasonal naive of the LONGEST period (a week of steps),
 * the scale the issue's targets name; M4 scaled its hourly series by the daily period (24) instead, which
 * multiplies every MASE of a series by the same factor and leaves every ratio below unchanged.
 *
 * Targets (issue 28): mean MASE of ours <= 0.9 x that of the seasonal naive of the longest period; <= 1.0 x
 * the best of R's stlf, auto.arima + fourier and tbats by mean MASE; every series at or below its seasonal
 * naive. A peer that failed or timed out on a series counts with the seasonal naive of the longest period
 * there (what its user would fall back to) and is marked `*`, so every mean is over the same series.
 * Interval coverage (80%, 95%) and MSIS come from the in-process run (intervals.ts intervalsOf).
 *
 *   npm run bench subdaily                   or   npx tsx bench/forecast/subdaily.ts
 *   BENCH_FORECAST_PEERS=0 | cached          as in run.ts, for both peers.py and peers.R (cached: reused when
 *                                            the sets and the peer script are unchanged)
 *   BENCH_SUBDAILY_SERVICE=0                 ours in-process only (no service run)
 *   BENCH_CORPUS_ONLY=regex                  only the series whose id matches
 *   BENCH_PEERS_TIME_LIMIT=300               seconds per series and peer model (both scripts)
 * Needs the peers installed (bash bench/forecast/install-peers.sh). Writes bench/.out/subdaily.md and .json.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { trainModel } from '../../src/training/index.js';
import { startService, stopService } from '../service.js';
import { freshDatabase } from '../support.js';
import { subDailySets, inputOf, type ForecastSet } from './datasets.js';
import { intervalsOf, type IntervalResult } from './intervals.js';
import { maseScale, naiveForecasts, score, type Predictions } from './naive.js';
import { forecastThroughService, PEERS, runPeers } from './run.js';

const here = dirname(fileURLToPath(import.meta.url));
const OUT = join(here, '..', '.out');
const ONLY = process.env.BENCH_CORPUS_ONLY ? new RegExp(process.env.BENCH_CORPUS_ONLY) : null;
const SERVICE = process.env.BENCH_SUBDAILY_SERVICE !== '0';

/** Columns of the table: [key, label]; keys name naive.ts forecasts, `r.` peers.R's and `py.` peers.py's. */
const R_MODELS = [
  ['r.stlf', 'R stlf (mstl + ets)'],
  ['r.stlf_arima', 'R stlf + auto.arima'],
  ['r.arima_fourier', 'R auto.arima + fourier'],
  ['r.tbats', 'R tbats'],
] as const;
const PY_MODELS = [
  ['py.stl_ets', 'statsmodels STL + ETS'],
  ['py.stl_arima', 'statsmodels STL + ARIMA'],
  ['py.sarima', 'statsmodels SARIMAX + Fourier'],
] as const;
/** The issue's anchor: the best of these three by mean MASE. */
const R_ANCHOR = ['r.stlf', 'r.arima_fourier', 'r.tbats'];

interface SeriesResult {
  set: ForecastSet;
  scale: number;
  /** MASE of ours in-process and through the service (undefined when not run or failed). */
  inProcess?: number;
  service?: number;
  model: string;
  serviceModel?: string;
  seconds: { inProcess?: number; service?: number };
  /** MASE by column key; `missed` holds the peers that failed or timed out (scored as the weekly naive). */
  mase: Record<string, number>;
  missed: Record<string, string>;
  peerSeconds: Record<string, number>;
  intervals?: IntervalResult;
}

type RPeers = Record<string, Record<string, { pred?: number[]; seconds: number; error?: string }>>;

/** Runs peers.R on the sets' known rows; cached like run.ts runPeers (BENCH_FORECAST_PEERS=cached). */
async function runRPeers(sets: ForecastSet[]): Promise<RPeers> {
  const input = sets
    .map((s) => {
      const hidden = new Set(s.hidden);
      const known = s.y.filter((_, i) => !hidden.has(i));
      return [s.id, (s.time?.periods ?? []).join(','), s.hidden.length, known.join(',')].join('\t');
    })
    .join('\n');
  const key = createHash('sha256')
    .update(input)
    .update(readFileSync(join(here, 'peers.R')))
    .update(process.env.BENCH_PEERS_TIME_LIMIT ?? '')
    .digest('hex');
  const cache = join(OUT, 'subdaily-r-peers.json');
  if (PEERS === 'cached' && existsSync(cache)) {
    const cached = JSON.parse(readFileSync(cache, 'utf8')) as { key: string; result: RPeers };
    if (cached.key === key) {
      console.log('R peers: reused from bench/.out/subdaily-r-peers.json (same sets, same peers.R)');
      return cached.result;
    }
  }
  const file = join(OUT, 'subdaily-r-sets.tsv');
  writeFileSync(file, `${input}\n`);
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = spawn('Rscript', [join(here, 'peers.R'), file], { stdio: ['ignore', 'pipe', 'inherit'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`peers.R exited with ${code}`))));
  });
  const result: RPeers = {};
  for (const line of stdout.split('\n').filter(Boolean)) {
    const [id, model, seconds, status, values] = line.split('\t') as [string, string, string, string, string];
    (result[id] ??= {})[model] = status === 'ok' ? { pred: values.split(',').map(Number), seconds: Number(seconds) } : { error: status, seconds: Number(seconds) };
  }
  writeFileSync(cache, JSON.stringify({ key, result }));
  return result;
}

const longest = (set: ForecastSet) => (set.time?.periods ?? [1]).at(-1)!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export async function benchSubdaily() {
  const sets = subDailySets().filter((s) => !ONLY || ONLY.test(s.id));
  mkdirSync(OUT, { recursive: true });
  const results: SeriesResult[] = sets.map((set) => {
    const scale = maseScale(set, longest(set));
    const mase: Record<string, number> = {};
    for (const [name, pred] of Object.entries(naiveForecasts(set))) mase[name] = score(set, pred, true) / scale;
    return { set, scale, model: '-', seconds: {}, mase, missed: {}, peerSeconds: {} };
  });
  const masOf = (r: SeriesResult, pred: Predictions, rounded = true) => score(r.set, pred, rounded) / r.scale;
  // The peers are child processes: they run while ours trains (on these shared cores the run is long).
  const peers = PEERS === '0' ? null : Promise.all([runPeers(sets, 'subdaily'), runRPeers(sets)]);
  // Reported when awaited below, not as an unhandled rejection in the meantime.
  peers?.catch(() => undefined);

  for (const r of results) {
    const started = performance.now();
    try {
      const trained = trainModel(inputOf(r.set));
      r.seconds.inProcess = (performance.now() - started) / 1000;
      r.inProcess = masOf(r, trained.forecasts.map((f) => Number(f.values[r.set.target])), false);
      const out = trained.selection?.outputs.find((o) => o.column === r.set.target);
      r.model = out ? out.description || out.chosen : '-';
      try {
        r.intervals = intervalsOf(r.set, 'sub-daily', trained);
      } catch {
        // no intervals in this forecast: the table shows '-'
      }
    } catch (e) {
      r.model = `failed: ${(e as Error).message}`;
    }
    console.log(`${r.set.id}: in-process MASE ${r.inProcess?.toFixed(3) ?? '-'} in ${r.seconds.inProcess?.toFixed(1) ?? '-'} s (${r.model})`);
  }

  if (SERVICE) {
    const db = await freshDatabase('bench_subdaily');
    try {
      const service = await startService(db.url, { workers: 1, tz: 'UTC' });
      try {
        for (const r of results) {
          try {
            const ours = await forecastThroughService(service, r.set);
            r.service = masOf(r, ours.predictions, false);
            r.serviceModel = ours.model;
            r.seconds.service = ours.wallMs / 1000;
          } catch (e) {
            r.serviceModel = `failed: ${(e as Error).message}`;
          }
          console.log(`${r.set.id}: service MASE ${r.service?.toFixed(3) ?? '-'} in ${r.seconds.service?.toFixed(1) ?? '-'} s`);
        }
      } finally {
        await stopService(service);
      }
    } finally {
      await db.drop();
    }
  }

  if (peers) {
    const [py, rPeers] = await peers;
    const weekly = (r: SeriesResult) => r.mase['weekly naive']!;
    const take = (r: SeriesResult, key: string, peer: { pred?: Predictions; seconds?: number; error?: string } | undefined) => {
      if (peer?.seconds !== undefined) r.peerSeconds[key] = peer.seconds;
      if (peer?.pred && peer.pred.length === r.set.hidden.length && peer.pred.every((v) => Number.isFinite(Number(v)))) {
        r.mase[key] = masOf(r, peer.pred);
      } else {
        r.missed[key] = peer?.error ?? 'no forecast';
        r.mase[key] = weekly(r);
      }
    };
    for (const r of results) for (const [key] of PY_MODELS) take(r, key, py[r.set.id]?.[key.slice(3)]);
    for (const r of results) {
      for (const [key] of R_MODELS) take(r, key, rPeers[r.set.id]?.[key.slice(2)]);
      for (const p of r.set.time?.periods ?? []) take(r, `r.snaive_${p}`, rPeers[r.set.id]?.[`snaive_${p}`]);
    }
  }

  const markdown = [perSeriesTable(results), '', targets(results), '', intervalTable(results)].join('\n');
  writeFileSync(join(OUT, 'subdaily.md'), `${markdown}\n`);
  writeFileSync(join(OUT, 'subdaily.json'), JSON.stringify(results.map(({ set, ...r }) => ({ id: set.id, ...r }))));
  console.log(`\n${markdown}\n\n(bench/.out/subdaily.md)`);
  return results;
}

const digits = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '-' : v.toFixed(3));

function perSeriesTable(results: SeriesResult[]): string {
  const peers = [...R_MODELS, ...PY_MODELS];
  const lines = [
    `| series | rows known / ahead | periods | ours in-process (model, s) | ours via service (s) | daily naive | weekly naive | ${peers.map(([, l]) => l).join(' | ')} | R snaive (day / week) | ours / weekly naive |`,
    `|---|---:|---|---|---:|---:|---:|${peers.map(() => '---:').join('|')}|---:|---:|`,
  ];
  for (const r of results) {
    const periods = r.set.time?.periods ?? [];
    const peer = (key: string) => (key in r.mase ? `${digits(r.mase[key])}${r.missed[key] ? '*' : ''}` : '-');
    const rSnaive = periods.map((p) => peer(`r.snaive_${p}`)).join(' / ');
    const ours = r.inProcess ?? r.service;
    lines.push(
      `| ${r.set.label} | ${r.set.rows.length - r.set.hidden.length} / ${r.set.hidden.length} | ${periods.join(', ')} | ${digits(r.inProcess)} (${r.model}, ${r.seconds.inProcess?.toFixed(1) ?? '-'} s) | ${digits(r.service)} (${r.seconds.service?.toFixed(1) ?? '-'} s) | ${digits(r.mase['daily naive'])} | ${digits(r.mase['weekly naive'])} | ${peers.map(([k]) => peer(k)).join(' | ')} | ${rSnaive} | ${ours === undefined ? '-' : (ours / r.mase['weekly naive']!).toFixed(2)} |`,
    );
  }
  const missed = results.flatMap((r) => Object.entries(r.missed).map(([k, why]) => `${r.set.id} ${k}: ${why}`));
  if (missed.length > 0) lines.push('', `\\* failed or timed out, scored as the weekly naive: ${missed.join('; ')}.`);
  const slow = results.flatMap((r) => Object.entries(r.peerSeconds).map(([k, s]) => [k, s] as const));
  const byPeer = new Map<string, number[]>();
  for (const [k, s] of slow) byPeer.set(k, [...(byPeer.get(k) ?? []), s]);
  if (byPeer.size > 0) lines.push('', `Peer seconds per series (median, max): ${[...byPeer].map(([k, s]) => `${k} ${median(s).toFixed(1)}, ${Math.max(...s).toFixed(1)}`).join('; ')}.`);
  return lines.join('\n');
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function targets(results: SeriesResult[]): string {
  const lines = ['| ours | mean MASE | / weekly naive (target <= 0.9) | / best of R stlf, auto.arima + fourier, tbats (target <= 1.0) | series <= weekly naive | series <= best seasonal naive |', '|---|---:|---:|---:|---:|---:|'];
  const naiveMean = mean(results.map((r) => r.mase['weekly naive']!));
  const anchors = R_ANCHOR.filter((k) => results.every((r) => k in r.mase)).map((k) => [k, mean(results.map((r) => r.mase[k]!))] as const);
  const best = anchors.sort((a, b) => a[1] - b[1])[0];
  for (const [label, pick] of [
    ['in-process', (r: SeriesResult) => r.inProcess],
    ['via service', (r: SeriesResult) => r.service],
  ] as const) {
    if (!results.every((r) => pick(r) !== undefined)) continue;
    const ours = mean(results.map((r) => pick(r)!));
    const atWeekly = results.filter((r) => pick(r)! <= r.mase['weekly naive']! + 1e-9).length;
    const atBest = results.filter((r) => pick(r)! <= Math.min(r.mase['weekly naive']!, r.mase['daily naive'] ?? Infinity) + 1e-9).length;
    lines.push(
      `| ${label} | ${ours.toFixed(3)} | ${(ours / naiveMean).toFixed(3)} | ${best ? `${(ours / best[1]).toFixed(3)} (${best[0]} ${best[1].toFixed(3)})` : '-'} | ${atWeekly} / ${results.length} | ${atBest} / ${results.length} |`,
    );
  }
  const columns: (readonly [string, string])[] = [['daily naive', 'daily naive'], ['weekly naive', 'weekly naive'], ...R_MODELS, ...PY_MODELS];
  lines.push('', `Mean MASE over the ${results.length} series: ${columns.filter(([k]) => results.every((r) => k in r.mase)).map(([k, l]) => `${l} ${mean(results.map((r) => r.mase[k]!)).toFixed(3)}`).join('; ')}.`);
  return lines.join('\n');
}

function intervalTable(results: SeriesResult[]): string {
  const rs = results.flatMap((r) => (r.intervals ? [r.intervals] : []));
  if (rs.length === 0) return 'Intervals: none in the in-process forecasts.';
  const lines = ['| series (in-process) | 80% covers | 95% covers | MSIS 80% | MSIS 95% |', '|---|---:|---:|---:|---:|'];
  for (const i of rs) lines.push(`| ${i.id} | ${i.cover80.toFixed(3)} | ${i.cover95.toFixed(3)} | ${(i.score80 / i.scale).toFixed(3)} | ${(i.score95 / i.scale).toFixed(3)} |`);
  lines.push(
    `| mean per series (${rs.length}) | ${mean(rs.map((i) => i.cover80)).toFixed(3)} | ${mean(rs.map((i) => i.cover95)).toFixed(3)} | ${mean(rs.map((i) => i.score80 / i.scale)).toFixed(3)} | ${mean(rs.map((i) => i.score95 / i.scale)).toFixed(3)} |`,
  );
  lines.push('', 'MSIS scaled as intervals.ts does: by the in-sample MAE of the seasonal naive of set.time.season (a day of steps here).');
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchSubdaily();
}
