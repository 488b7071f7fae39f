/**
 * Panels (issue 33): uploads holding many series (panels-data.ts: real public panels from vega-datasets and
 * @stdlib datasets, long with key columns and wide with value columns side by side), forecast by ours and,
 * in the same run and on the same split, per series by:
 *  - naive, seasonal naive and drift (computed here, in naive.ts's style: the last value; the value one season
 *    earlier, where the known part holds two seasons; the line through the first and last known values);
 *  - Hyndman's forecast package for R (panels.R): ets, auto.arima, thetaf, and stlf on seasonal series with
 *    more than two cycles, each fitted on the series alone with its defaults.
 *
 * Score per series: MASE = MAE over the `h` hidden values / the in-sample MAE of the seasonal naive of the
 * known values (lag = the season where the known part holds two seasons, else 1: the naive); then the mean
 * over a panel's series (series whose known values never change have no scale and are left out of every
 * mean, counted in the table), then the mean over panels. The peers' forecasts are rounded to the data's
 * decimals first, as the service rounds its own (naive.ts score).
 * A peer that failed or ran past the limit on a series is scored there as the seasonal naive (the naive
 * where there is none) and the cell is marked `*`: every mean is over the same series.
 *
 * The issue's bars:
 *  - per panel: ours' mean MASE at or below the best naive, the lowest of the naive, seasonal naive and drift
 *    panel means (picked in hindsight);
 *  - over panels: ours at or below 1.0x R's best per-series model. "R's best per-series model" is read as
 *    the issue writes it, "ets, auto.arima, theta, stlf fitted [per series] in the same run": per panel, the
 *    one of those four models (each fitted to every series on its own) with the lowest mean MASE over the
 *    panel's series, picked in hindsight; its panel means averaged over the panels are the bar. The mean of
 *    the per-series minimum of the four (an oracle no user has) is printed beside it for scale.
 *  - wide uploads: every empty value column forecast, each at or below its seasonal naive.
 * A panel where ours timed out or left a series without a forecast is out of the means over panels (the
 * line says how many panels are in) and fails its per-panel bar.
 *
 *   npm run bench panels                   or   npx tsx bench/forecast/panels.ts
 *   BENCH_PANELS_ONLY=regex                only the panels whose id matches (ids in panels-data.ts PANELS)
 *   BENCH_PANELS_EXTRA=1                   the validation panels (panels-data.ts EXTRA_PANELS) instead of the 13,
 *                                          written to bench/.out/panels-extra.md
 *   BENCH_PANELS_FRESH=1                   the fresh held-out panels (panels-data.ts FRESH_PANELS) instead of the 13,
 *                                          written to bench/.out/panels-fresh.md
 *   BENCH_PANELS_SERVICE=1                 ours through a real service (bench/service.ts, Postgres at
 *                                          BENCH_DATABASE_URL) instead of trainModel in a child process
 *   BENCH_PANELS_TIME_LIMIT=300            seconds per panel for ours; past it the panel reads `timeout`
 *   BENCH_FORECAST_PEERS=0 | cached        no R peers | reuse bench/.out/panels-r-peers.json per series whose
 *                                          values and panels.R are unchanged (all 670 series took 23 minutes
 *                                          under a load of 11; cached, a second)
 *   BENCH_PEERS_TIME_LIMIT=300             seconds per R fit (under a load of 11 auto.arima took up to 60 s on
 *                                          a monthly series of 110 values)
 *   BENCH_PANELS_OURS=bench/.out/panels.json  ours from that earlier run's file instead of a new run (the peers
 *                                          and the scores are computed anew: a run rescored against refitted peers)
 *   BENCH_PANELS_ORIGIN=k                  forecast from k horizons earlier: every series loses its last k x h values
 *                                          before the last h are hidden, so a change can be measured on more than
 *                                          the one hidden window per panel (written to panels[-extra|-fresh]-origin<k>.md)
 *   BENCH_COMMIT=abc1234                   the commit to name in the output when the tree has no .git (an
 *                                          exported `git archive` of a commit, measured while the working
 *                                          tree is being edited)
 * The R peers run before ours, not beside it, so that ours' wall time is not shared with them.
 * Needs the peers installed (bash bench/forecast/install-peers.sh). Prints the panel table and writes it with
 * the per-series rows to bench/.out/panels.md (and a copy named by the commit, so before/after runs are
 * both kept), the raw figures to bench/.out/panels.json.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decimalsOf, EXTRA_PANELS, FRESH_PANELS, locatorOf, PANELS, uploadOf, type Panel } from './panels-data.js';
import { describePhases, OUT, PanelService, runOurs, SERVICE, TIME_LIMIT_S, type OursRun } from './panels-ours.js';

const here = dirname(fileURLToPath(import.meta.url));
const ONLY = process.env.BENCH_PANELS_ONLY ? new RegExp(process.env.BENCH_PANELS_ONLY) : null;
const PEERS = process.env.BENCH_FORECAST_PEERS ?? '1';
const STORED = process.env.BENCH_PANELS_OURS;
/** The validation panels (panels-data.ts EXTRA_PANELS) instead of the 13: a change measured on the 13 must not do worse on these. */
const EXTRA = process.env.BENCH_PANELS_EXTRA === '1';
/** The fresh held-out panels (panels-data.ts FRESH_PANELS) instead of the 13: measured, never tuned on. */
const FRESH = process.env.BENCH_PANELS_FRESH === '1';
/** Horizons to step back before hiding the last h values (0: the panels as they are). */
export const ORIGIN = Number(process.env.BENCH_PANELS_ORIGIN ?? '0');
if (!Number.isInteger(ORIGIN) || ORIGIN < 0) throw new Error('BENCH_PANELS_ORIGIN must be a whole number of horizons, 0 or more');

/** Known values a series keeps at an earlier origin, or its panel is left out of that run. */
export const MIN_KNOWN_AT_ORIGIN = 3;

/** The panel as it was k horizons earlier: each series without its last k x h dates and values. */
export function atOrigin(panel: Panel, k: number): Panel {
  if (k === 0) return panel;
  const cut = k * panel.h;
  return { ...panel, series: panel.series.map((s) => ({ ...s, dates: s.dates.slice(0, -cut), values: s.values.slice(0, -cut) })) };
}

/** Whether every series of a panel stepped back (atOrigin) still has a horizon to hide and MIN_KNOWN_AT_ORIGIN values before it. */
export const keepsEnoughAtOrigin = (panel: Panel) => panel.series.every((s) => s.values.length >= panel.h + MIN_KNOWN_AT_ORIGIN);

/** bench/.out/panels.json as written below. */
export interface StoredRun {
  started: string;
  commit: string;
  service: boolean;
  results: { id: string; ours: Omit<OursRun, 'rows'>; series: SeriesScore[] }[];
}

export const R_MODELS = [
  ['ets', 'R ets'],
  ['auto_arima', 'R auto.arima'],
  ['theta', 'R theta'],
  ['stlf', 'R stlf'],
] as const;
type RModel = (typeof R_MODELS)[number][0];
const NAIVES = ['naive', 'seasonal naive', 'drift'] as const;
type Naive = (typeof NAIVES)[number];

interface SeriesScore {
  key: string;
  known: number;
  /** MASE's scale; 0 = constant known values, left out of the means. */
  scale: number;
  ours?: number;
  naive: Partial<Record<Naive, number>>;
  r: Partial<Record<RModel, number>>;
  /** R models that failed or timed out here (scored as the seasonal naive). */
  rMissed: Partial<Record<RModel, string>>;
}

export interface PanelResult {
  panel: Panel;
  rows: number;
  ours: OursRun;
  series: SeriesScore[];
}

// ---------------------------------------------------------------------------------------------------------
// Per-series forecasts and scores

const splitOf = (p: Panel, values: number[]) => ({ known: values.slice(0, -p.h), truth: values.slice(-p.h) });
/** The season used for a series: the panel's where the known part holds two of them (naive.ts's rule), else none. */
const seasonOf = (p: Panel, known: number[]) => (p.season > 1 && known.length >= 2 * p.season ? p.season : 1);

function scaleOf(known: number[], lag: number): number {
  let sum = 0;
  for (let t = lag; t < known.length; t++) sum += Math.abs(known[t]! - known[t - lag]!);
  return sum / Math.max(1, known.length - lag);
}

function naiveOf(p: Panel, known: number[]): Partial<Record<Naive, number[]>> {
  const n = known.length;
  const last = known[n - 1]!;
  const slope = n > 1 ? (last - known[0]!) / (n - 1) : 0;
  const steps = Array.from({ length: p.h }, (_, i) => i);
  const s = seasonOf(p, known);
  return {
    naive: steps.map(() => last),
    drift: steps.map((i) => last + (i + 1) * slope),
    ...(s > 1 ? { 'seasonal naive': steps.map((i) => known[n - s + (i % s)]!) } : {}),
  };
}

const maeOf = (pred: number[], truth: number[]) => pred.reduce((a, v, i) => a + Math.abs(v - truth[i]!), 0) / truth.length;
const rounded = (pred: number[], decimals: number) => pred.map((v) => Math.round(v * 10 ** decimals) / 10 ** decimals);

// ---------------------------------------------------------------------------------------------------------
// R peers

const uptime = () => loadavg().map((v) => v.toFixed(2)).join(' ');

type RPeers = Record<string, Partial<Record<RModel, { pred?: number[]; seconds: number; error?: string }>>>;
const seriesId = (p: Panel, k: number) => `${p.id}#${k}`;

const LIMIT = Number(process.env.BENCH_PEERS_TIME_LIMIT ?? 300);

/**
 * panels.R on every series not in the cache. The cache holds one entry per series (its known values, season,
 * horizon and panels.R): adding a panel fits only its series, and a fit that ran past a shorter limit than
 * today's is fitted again.
 */
async function runRPeers(panels: Panel[]): Promise<RPeers> {
  const script = readFileSync(join(here, 'panels.R'));
  const wanted = panels.flatMap((p) =>
    p.series.map((s, k) => {
      const line = [p.season, p.h, splitOf(p, s.values).known.join(',')].join('\t');
      return { id: seriesId(p, k), line, hash: createHash('sha256').update(line).update(script).digest('hex') };
    }),
  );
  const cacheFile = join(OUT, 'panels-r-peers.json');
  type Entry = { limit: number; models: RPeers[string] };
  // Read whatever the run: a run that fits anew (not `cached`) writes its fits into the file alongside the other
  // sets' entries, where it used to leave only its own and a later cached run of the validation or held-out set
  // fitted R all over again.
  let cache: Record<string, Entry> = {};
  if (existsSync(cacheFile)) {
    const stored = JSON.parse(readFileSync(cacheFile, 'utf8')) as { entries?: Record<string, Entry> };
    cache = stored.entries ?? {};
  }
  const reusable = (e: Entry | undefined) => PEERS === 'cached' && e !== undefined && (e.limit >= LIMIT || Object.values(e.models).every((m) => !m?.error?.startsWith('timed out')));
  const todo = wanted.filter((w) => !reusable(cache[w.hash]));
  if (todo.length > 0) {
    const file = join(OUT, 'panels-r-series.tsv');
    writeFileSync(file, `${todo.map((w, i) => `${i}\t${w.line}`).join('\n')}\n`);
    const started = performance.now();
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = spawn('Rscript', [join(here, 'panels.R'), file], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, BENCH_PEERS_TIME_LIMIT: String(LIMIT) } });
      const chunks: Buffer[] = [];
      child.stdout.on('data', (c: Buffer) => chunks.push(c));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`panels.R exited with ${code}`))));
    });
    for (const w of todo) cache[w.hash] = { limit: LIMIT, models: {} };
    for (const line of stdout.split('\n').filter(Boolean)) {
      const [index, model, seconds, status, values] = line.split('\t') as [string, RModel, string, string, string];
      cache[todo[Number(index)]!.hash]!.models[model] = status === 'ok' ? { pred: values.split(',').map(Number), seconds: Number(seconds) } : { error: status, seconds: Number(seconds) };
    }
    console.log(`R peers: ${todo.length} series fitted in ${((performance.now() - started) / 1000).toFixed(0)} s, ${wanted.length - todo.length} from bench/.out/panels-r-peers.json, load ${uptime()}`);
    writeFileSync(cacheFile, JSON.stringify({ entries: cache }));
  } else console.log(`R peers: all ${wanted.length} series from bench/.out/panels-r-peers.json (same values, same panels.R)`);
  return Object.fromEntries(wanted.map((w) => [w.id, cache[w.hash]!.models]));
}

// ---------------------------------------------------------------------------------------------------------

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** `stored`: ours' MASE per series from an earlier run's file (BENCH_PANELS_OURS), instead of `ours.rows`. */
export function scorePanel(p: Panel, ours: OursRun, rPeers: RPeers | null, stored?: (number | undefined)[]): SeriesScore[] {
  const decimals = decimalsOf(p);
  const forecasts = p.series.map(() => new Array<number | undefined>(p.h).fill(undefined));
  const locator = locatorOf(p);
  for (const row of ours.rows) for (const f of locator.read(row)) forecasts[f.series]![f.step] = f.value;
  return p.series.map((s, k) => {
    const { known, truth } = splitOf(p, s.values);
    const scale = scaleOf(known, seasonOf(p, known));
    const mase = (pred: number[]) => maeOf(pred, truth) / scale;
    const naive = Object.fromEntries(Object.entries(naiveOf(p, known)).map(([name, pred]) => [name, mase(rounded(pred, decimals))])) as Partial<Record<Naive, number>>;
    const fallback = naive['seasonal naive'] ?? naive.naive!;
    const r: SeriesScore['r'] = {};
    const rMissed: SeriesScore['rMissed'] = {};
    for (const [model] of R_MODELS) {
      const peer = rPeers?.[seriesId(p, k)]?.[model];
      if (!peer) continue;
      if (peer.pred && peer.pred.length === p.h && peer.pred.every(Number.isFinite)) r[model] = mase(rounded(peer.pred, decimals));
      else {
        rMissed[model] = peer.error ?? 'no forecast';
        r[model] = fallback;
      }
    }
    const got = forecasts[k]!;
    const ours = stored ? stored[k] : got.every((v) => v !== undefined) ? mase(got) : undefined;
    return { key: s.key.join(' / '), known: known.length, scale, ...(ours === undefined ? {} : { ours }), naive, r, rMissed };
  });
}

/** Panel means over the scored series (scale > 0); undefined where a column is missing on any of them. */
export function panelMeans(result: Pick<PanelResult, 'series'>) {
  const scored = result.series.filter((s) => s.scale > 0);
  const of = (pick: (s: SeriesScore) => number | undefined) => {
    const values = scored.map(pick);
    return values.every((v): v is number => v !== undefined) && values.length > 0 ? mean(values) : undefined;
  };
  const naive = Object.fromEntries(NAIVES.map((n) => [n, of((s) => s.naive[n])])) as Record<Naive, number | undefined>;
  const r = Object.fromEntries(R_MODELS.map(([m]) => [m, of((s) => s.r[m])])) as Record<RModel, number | undefined>;
  const bestNaive = NAIVES.flatMap((n) => (naive[n] === undefined ? [] : [[n, naive[n]] as const])).sort((a, b) => a[1] - b[1])[0]!;
  const bestR = R_MODELS.flatMap(([m]) => (r[m] === undefined ? [] : [[m, r[m]] as const])).sort((a, b) => a[1] - b[1])[0];
  const oracle = of((s) => {
    const v = R_MODELS.flatMap(([m]) => (s.r[m] === undefined ? [] : [s.r[m]]));
    return v.length > 0 ? Math.min(...v) : undefined;
  });
  return { scored: scored.length, ours: of((s) => s.ours), forecast: scored.filter((s) => s.ours !== undefined).length, naive, r, bestNaive, bestR, oracle };
}

const f3 = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '-' : v.toFixed(3));
const frequencyOf = (p: Panel) => `${p.frequency}, h ${p.h}${p.season > 1 ? `, season ${p.season}` : ''}`;

function describeOurs(r: PanelResult): string {
  const m = panelMeans(r);
  if (r.ours.status === 'timeout') return `timeout (> ${TIME_LIMIT_S} s)`;
  if (r.ours.status === 'failed') return `failed: ${r.ours.error ?? ''}`.slice(0, 80);
  const partial = m.forecast < m.scored ? ` (${m.forecast}/${m.scored} forecast)` : '';
  return `${m.ours !== undefined ? f3(m.ours) : `${f3(mean(r.series.filter((s) => s.scale > 0 && s.ours !== undefined).map((s) => s.ours!)))}†`}${partial} (${(r.ours.wallMs / 1000).toFixed(1)} s)`;
}

function panelTable(results: PanelResult[]): string {
  const head = ['panel', 'series', 'rows', 'frequency', 'ours mean MASE (wall)', 'naive', 'seasonal naive', 'drift', ...R_MODELS.map(([, l]) => l), 'best R', 'ours / best naive', 'ours / best R'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 || i === 3 || i === 4 ? '---' : '---:')).join('|')}|`];
  for (const r of results) {
    const m = panelMeans(r);
    const missed = (model: RModel) => (r.series.some((s) => s.rMissed[model]) ? '*' : '');
    const series = m.scored < r.series.length ? `${r.series.length} (${m.scored} scored)` : String(r.series.length);
    lines.push(
      `| ${[
        `${r.panel.id} (${r.panel.layout})`,
        series,
        r.rows,
        frequencyOf(r.panel),
        describeOurs(r),
        f3(m.naive.naive),
        f3(m.naive['seasonal naive']),
        f3(m.naive.drift),
        ...R_MODELS.map(([model]) => `${f3(m.r[model])}${missed(model)}`),
        m.bestR ? `${m.bestR[0]} ${f3(m.bestR[1])}` : '-',
        m.ours !== undefined ? (m.ours / m.bestNaive[1]).toFixed(2) : '-',
        m.ours !== undefined && m.bestR ? (m.ours / m.bestR[1]).toFixed(2) : '-',
      ].join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

function summary(results: PanelResult[]): string {
  const all = results.map((r) => ({ r, m: panelMeans(r) }));
  const done = all.filter(({ m }) => m.ours !== undefined);
  const atNaive = done.filter(({ m }) => m.ours! <= m.bestNaive[1] + 1e-9).length;
  const lines = [
    `Panels at or below their best naive: ${atNaive} of ${results.length} (${results.length - done.length} without a whole forecast: ${all.filter(({ m }) => m.ours === undefined).map(({ r }) => `${r.panel.id} ${r.ours.status === 'ok' ? 'partial' : r.ours.status}`).join(', ') || 'none'}).`,
  ];
  const withR = done.filter(({ m }) => m.bestR !== undefined);
  if (withR.length > 0) {
    const ours = mean(withR.map(({ m }) => m.ours!));
    const bestR = mean(withR.map(({ m }) => m.bestR![1]));
    const oracle = mean(withR.map(({ m }) => m.oracle ?? m.bestR![1]));
    const perModel = R_MODELS.filter(([model]) => withR.every(({ m }) => m.r[model] !== undefined)).map(([model, label]) => `${label} ${f3(mean(withR.map(({ m }) => m.r[model]!)))}`);
    lines.push(
      `Mean over the ${withR.length} panels ours forecast whole: ours ${f3(ours)}; R's best per-series model per panel ${f3(bestR)} -> ours / it ${(ours / bestR).toFixed(3)} (bar <= 1.0: ${ours <= bestR + 1e-9 ? 'met' : 'MISSED'}); best naive per panel ${f3(mean(withR.map(({ m }) => m.bestNaive[1])))}; per-series oracle of the four R models ${f3(oracle)}${perModel.length > 0 ? `; each R model on the panels where it ran everywhere: ${perModel.join(', ')}` : ''}.`,
    );
    const picks = new Map<string, number>();
    for (const { m } of withR) picks.set(m.bestR![0], (picks.get(m.bestR![0]) ?? 0) + 1);
    lines.push(`Best R model per panel: ${[...picks].map(([k, v]) => `${k} ${v}`).join(', ')}.`);
  }
  for (const { r, m } of all.filter(({ r }) => r.panel.layout === 'wide')) {
    const scored = r.series.filter((s) => s.scale > 0);
    const bar = (s: SeriesScore) => s.naive['seasonal naive'] ?? s.naive.naive!;
    const ok = scored.filter((s) => s.ours !== undefined && s.ours <= bar(s) + 1e-9).length;
    lines.push(
      `Wide ${r.panel.id}: ${m.forecast} of ${scored.length} empty columns forecast, ${ok} of ${scored.length} at or below their ${r.series.some((s) => s.naive['seasonal naive'] !== undefined) ? 'seasonal naive' : 'naive (no season in the known rows)'}.`,
    );
  }
  for (const r of results) {
    const p = r.ours.panel;
    const phases = describePhases(r.ours);
    const chosen = (r.ours.outputs ?? []).map((o) => `${o.column}: ${o.chosen}`).join('; ');
    lines.push(
      `- ${r.panel.id}: ${r.ours.status}, ${(r.ours.wallMs / 1000).toFixed(1)} s, load ${r.ours.load}${phases ? `; ${phases}` : ''}${p ? `; engine found ${p.series ?? '?'} series by [${(p.keys ?? []).join(', ')}], ${p.shortest ?? '?'}-${p.longest ?? '?'} known rows, wins ${Object.entries(p.wins ?? {}).map(([k, v]) => `${k} ${v}`).join(', ')}` : '; no panel report'}${chosen ? `; chose ${chosen.slice(0, 200)}` : ''}`,
    );
  }
  return lines.join('\n');
}

function perSeriesTable(results: PanelResult[]): string {
  const lines = [
    `| panel | series | known / h | MASE scale | ours | naive | seasonal naive | drift | ${R_MODELS.map(([, l]) => l).join(' | ')} | ours / best naive |`,
    `|---|---|---:|---:|---:|---:|---:|---:|${R_MODELS.map(() => '---:').join('|')}|---:|`,
  ];
  for (const r of results)
    for (const s of r.series) {
      const best = Math.min(...NAIVES.flatMap((n) => (s.naive[n] === undefined ? [] : [s.naive[n]])));
      const cell = (v: number | undefined, missed?: string) => `${f3(v)}${missed ? '*' : ''}`;
      lines.push(
        `| ${r.panel.id} | ${s.key} | ${s.known} / ${r.panel.h} | ${s.scale > 0 ? s.scale.toPrecision(4) : '0 (not scored)'} | ${cell(s.ours)} | ${cell(s.naive.naive)} | ${cell(s.naive['seasonal naive'])} | ${cell(s.naive.drift)} | ${R_MODELS.map(([m]) => cell(s.r[m], s.rMissed[m])).join(' | ')} | ${s.ours !== undefined && s.scale > 0 ? (s.ours / best).toFixed(2) : '-'} |`,
      );
    }
  return lines.join('\n');
}

/** A commit label as part of a file name. */
export const fileTag = (commit: string) => commit.replace(/[^A-Za-z0-9]+/g, '-').replace(/-$/, '');

/** BENCH_COMMIT names the commit of a tree exported with `git archive` (no .git to ask). */
export const commitOf = () => {
  if (process.env.BENCH_COMMIT) return process.env.BENCH_COMMIT;
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    // Others edit the same tree: a run on uncommitted engine code must not pass for the commit's figures.
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head} + uncommitted src/` : head;
  } catch {
    return 'unknown';
  }
};

/** The base name of a run's files in bench/.out: panels[-fresh|-extra][-origin<k>][-service][-rescored]. */
export function runName(run: { fresh?: boolean; extra?: boolean; origin?: number; service?: boolean; rescored?: boolean }): string {
  const set = run.fresh ? '-fresh' : run.extra ? '-extra' : '';
  return `panels${set}${(run.origin ?? 0) > 0 ? `-origin${run.origin}` : ''}${run.service ? '-service' : ''}${run.rescored ? '-rescored' : ''}`;
}

export async function benchPanels() {
  const panels = Object.entries(FRESH ? FRESH_PANELS : EXTRA ? EXTRA_PANELS : PANELS)
    .filter(([id]) => !ONLY || ONLY.test(id))
    .map(([, make]) => atOrigin(make(), ORIGIN))
    .filter((panel) => {
      // Stepping back leaves some short panels (Iowa's 17 years, h 6) too few values to hide a horizon.
      const enough = keepsEnoughAtOrigin(panel);
      if (!enough) console.log(`${panel.id}: left out, a series keeps fewer than ${MIN_KNOWN_AT_ORIGIN} known values ${ORIGIN} horizon(s) earlier`);
      return enough;
    });
  mkdirSync(OUT, { recursive: true });
  const stored = STORED ? (JSON.parse(readFileSync(STORED, 'utf8')) as StoredRun) : null;
  const commit = stored?.commit ?? commitOf();
  const started = stored?.started ?? new Date().toISOString();
  console.log(`panels: ${panels.length} panels${ORIGIN > 0 ? `, forecast from ${ORIGIN} horizon(s) earlier` : ''}, ours ${SERVICE ? 'through a service' : 'in-process'}, limit ${TIME_LIMIT_S} s, commit ${commit}, load ${uptime()}`);
  const rPeers = PEERS === '0' ? null : await runRPeers(panels);
  const service = SERVICE && !stored ? new PanelService() : null;
  const results: PanelResult[] = [];
  try {
    for (const panel of panels) {
      const upload = uploadOf(panel);
      const before = stored?.results.find((r) => r.id === panel.id);
      if (stored && !before) throw new Error(`${STORED} has no panel ${panel.id}`);
      const ours = before ? { ...before.ours, rows: [] } : await runOurs(panel.id, upload, service);
      const result: PanelResult = { panel, rows: upload.rows.length, ours, series: scorePanel(panel, ours, rPeers, before?.series.map((s) => s.ours)) };
      results.push(result);
      console.log(`${panel.id}: ${panel.series.length} series, ${upload.rows.length} rows: ours ${describeOurs(result)}, load ${ours.load}${describePhases(ours) ? `; ${describePhases(ours)}` : ''}`);
    }
  } finally {
    await service?.close();
  }
  const rescored = STORED ? ` (ours from ${STORED}, rescored ${new Date().toISOString()} against the peers fitted since)` : '';
  const header = `Panels: ${started}, commit ${commit}${ORIGIN > 0 ? `, forecast from ${ORIGIN} horizon(s) before the last` : ''}, ours ${SERVICE ? 'through a service' : 'in-process'}, limit ${TIME_LIMIT_S} s per panel, load at the end ${STORED ? 'in each panel line' : uptime()}${rescored}.`;
  const markdown = [header, '', panelTable(results), '', summary(results), '', perSeriesTable(results)].join('\n');
  const name = runName({ fresh: FRESH, extra: EXTRA, origin: ORIGIN, service: SERVICE, rescored: STORED !== undefined });
  writeFileSync(join(OUT, `${name}.md`), `${markdown}\n`);
  writeFileSync(join(OUT, `${name}-${fileTag(commit)}.md`), `${markdown}\n`);
  writeFileSync(
    join(OUT, `${name}.json`),
    JSON.stringify({ started, commit, service: SERVICE, results: results.map((r) => ({ id: r.panel.id, rows: r.rows, ours: { ...r.ours, rows: undefined }, series: r.series })) }),
  );
  console.log(`\n${header}\n\n${panelTable(results)}\n\n${summary(results)}\n\n(per series: bench/.out/${name}.md)`);
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchPanels();
}
