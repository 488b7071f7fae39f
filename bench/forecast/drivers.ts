/**
 * Forecasts WITH known drivers: panels and single series whose covariates are filled in the rows to forecast
 * (drivers-data.ts: real data from npm packages, the sources and why each covariate is a driver in its header),
 * uploaded long as a user would (key column(s), date parts, covariates, the value last and empty in the last h
 * rows of every series) and forecast by ours (trainModel on inputOf(upload), in a child process bounded in time,
 * panels-ours.ts runOurs, which also reads back the engine's candidates and notes), and by the same upload WITHOUT its covariate columns (same rows),
 * so the table shows what the drivers moved. Ours is measured as the engine is at run time: whatever families it
 * has, it is only called and read.
 *
 * Peers fitted in the same run on the same known rows:
 *  - best naive per series in hindsight: the lowest MASE of naive, drift, seasonal naive (where the known part
 *    holds two seasons) and the mean of the known values, computed as panels.ts computes them (scorePanel);
 *  - R (drivers.R, forecast 8.20): per series auto.arima(y, xreg = X) (auto.arima(y) where that errors, counted
 *    as `fallback`), tslm(y ~ trend [+ season] + X); per panel the fixed-effects regression lm(y ~ factor(id) + X)
 *    on every series' known rows and the same in first differences, cumulated from each series' last known value.
 * A peer that failed or timed out on a series is scored there as the seasonal naive (the naive where there is
 * none) and its cell marked `*`; an auto.arima that fell back to no xreg is marked `†` (scored as it is).
 *
 * Score: MASE per series (MAE over the h hidden values / the in-sample MAE of the seasonal naive of the known
 * values, lag = the season where the known part holds two, else 1: panels.ts scorePanel; series whose known
 * values never change are left out), peers rounded to the data's decimals first (as the service rounds its own);
 * the mean over a case's series; then over cases the mean of those means, and the geometric mean of ours (with
 * drivers) / each column's case mean.
 *
 * A speed case: 1,000 daily series x 3 covariates (drivers-data.ts speedPanel: real weather windows repeated by
 * offsets), trainModel's wall time in-process against a target of 60 s on this 2-core machine, with and without
 * the covariates, and the mean MASE of ours and of the seasonal naive as a check that speed was not bought by
 * skipping the work.
 *
 *   npm run bench drivers                  or   npx tsx bench/forecast/drivers.ts
 *   BENCH_DRIVERS_ONLY=regex               only the cases whose id matches (ids in drivers-data.ts DRIVER_CASES)
 *   BENCH_DRIVERS_SPEED=0                  no speed case (=only: the speed case alone)
 *   BENCH_FORECAST_PEERS=0                 no R peers
 *   BENCH_PEERS_TIME_LIMIT=300             seconds per R fit;  BENCH_PANELS_TIME_LIMIT=300  seconds per run of ours
 * Prints the table; writes it with the per-series rows to bench/.out/drivers.md.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { geometricMean } from './corpus.js';
import { DRIVER_CASES, driversUploadOf, speedPanel, type DriverPanel } from './drivers-data.js';
import { decimalsOf } from './panels-data.js';
import { describePhases, OUT, runOurs, TIME_LIMIT_S, type OursRun } from './panels-ours.js';
import { commitOf, scorePanel } from './panels.js';

const here = dirname(fileURLToPath(import.meta.url));
const ONLY = process.env.BENCH_DRIVERS_ONLY ? new RegExp(process.env.BENCH_DRIVERS_ONLY) : null;
const SPEED = process.env.BENCH_DRIVERS_SPEED ?? '1';
const PEERS = process.env.BENCH_FORECAST_PEERS ?? '1';
const LIMIT = Number(process.env.BENCH_PEERS_TIME_LIMIT ?? 300);
const SPEED_TARGET_S = 60;

const R_MODELS = [
  ['arima_xreg', 'R auto.arima xreg'],
  ['tslm', 'R tslm'],
  ['fe_levels', 'R FE levels'],
  ['fe_diff', 'R FE differences'],
] as const;
type RModel = (typeof R_MODELS)[number][0];
type RFit = { pred: number[]; status: string; seconds: number };
/** case id -> series index -> model -> fit. */
type RPeers = Record<string, Record<number, Partial<Record<RModel, RFit>>>>;

const uptime = () => loadavg().map((v) => v.toFixed(2)).join(' ');
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const f3 = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '-' : v.toFixed(3));

// ---------------------------------------------------------------------------------------------------------
// Ours: panels-ours.ts runOurs (trainModel in panels-child.ts, killed at the limit), whose run carries the first
// output's candidates, so that the table can say how the engine's covariate-aware families scored in its own
// backtest (or why they did not apply).

/** The engine's candidates whose name says they read covariates (names as the engine has them at run time). */
const COVARIATE_FAMILY = /regression|fixed_effects|xreg|covariate/;

type DriversRun = OursRun;

/** `regression_arima 0.239, fixed_effects n/a, ...`: the covariate-aware candidates' backtest errors in the engine's metric. */
function covariateFamilies(run: DriversRun): string {
  const picked = (run.candidates ?? []).filter((c) => COVARIATE_FAMILY.test(c.name));
  if (picked.length === 0) return run.status === 'ok' ? 'none among the candidates' : '-';
  return picked.map((c) => `${c.name} ${c.error === null ? 'n/a' : c.error.toPrecision(3)}`).join(', ');
}

// ---------------------------------------------------------------------------------------------------------
// R peers

async function runRPeers(cases: DriverPanel[]): Promise<RPeers> {
  const dir = mkdtempSync(join(tmpdir(), 'drivers-r-'));
  try {
    const manifest = cases.map((p) => {
      const csv = join(dir, `${p.id}.csv`);
      const lines = [['id', 'y', ...p.covariates.map((_, c) => `x${c + 1}`)].join(',')];
      p.series.forEach((s, k) => {
        const n = s.values.length;
        s.dates.forEach((_, i) => lines.push([k, i >= n - p.h ? '' : s.values[i], ...s.x.map((xs) => xs[i])].join(',')));
      });
      writeFileSync(csv, `${lines.join('\n')}\n`);
      return [p.id, p.season, p.h, csv].join('\t');
    });
    writeFileSync(join(dir, 'cases.tsv'), `${manifest.join('\n')}\n`);
    const started = performance.now();
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = spawn('Rscript', [join(here, 'drivers.R'), join(dir, 'cases.tsv')], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, BENCH_PEERS_TIME_LIMIT: String(LIMIT) } });
      const chunks: Buffer[] = [];
      child.stdout.on('data', (c: Buffer) => chunks.push(c));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`drivers.R exited with ${code}`))));
    });
    const peers: RPeers = {};
    for (const line of stdout.split('\n').filter(Boolean)) {
      const [id, series, model, seconds, status, values] = line.split('\t') as [string, string, RModel, string, string, string?];
      const p = cases.find((c) => c.id === id)!;
      const pred = values ? values.split(',').map(Number) : [];
      const bySeries = (peers[id] ??= {});
      if (series === '*') {
        // A panel model: every series' h forecasts in index order.
        p.series.forEach((_, k) => ((bySeries[k] ??= {})[model] = { pred: pred.slice(k * p.h, (k + 1) * p.h), status, seconds: Number(seconds) }));
      } else (bySeries[Number(series)] ??= {})[model] = { pred, status, seconds: Number(seconds) };
    }
    console.log(`R peers: ${cases.length} cases fitted in ${((performance.now() - started) / 1000).toFixed(0)} s, load ${uptime()}`);
    return peers;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Scores

interface SeriesRow {
  key: string;
  known: number;
  scale: number;
  ours?: number;
  oursNoX?: number;
  bestNaive: number;
  bestNaiveName: string;
  /** Each naive method's MASE on the series (the panel's best method is the lowest mean of one of them). */
  naives: Record<string, number>;
  r: Partial<Record<RModel, number>>;
  /** '*' failed (scored as the seasonal naive), '†' auto.arima without xreg. */
  rMark: Partial<Record<RModel, string>>;
}

interface CaseResult {
  panel: DriverPanel;
  rows: number;
  ours: DriversRun;
  oursNoX: DriversRun;
  series: SeriesRow[];
  rSeconds: Partial<Record<RModel, number>>;
}

function scoreCase(p: DriverPanel, ours: OursRun, oursNoX: OursRun, peers: RPeers | null): SeriesRow[] {
  const decimals = decimalsOf(p);
  const withX = scorePanel(p, ours, null);
  const withoutX = scorePanel(p, oursNoX, null);
  const rounded = (pred: number[]) => pred.map((v) => Math.round(v * 10 ** decimals) / 10 ** decimals);
  return p.series.map((s, k) => {
    const a = withX[k]!;
    const known = s.values.slice(0, -p.h);
    const truth = s.values.slice(-p.h);
    const mase = (pred: number[]) => pred.reduce((sum, v, i) => sum + Math.abs(v - truth[i]!), 0) / truth.length / a.scale;
    const naives: [string, number][] = Object.entries(a.naive).flatMap(([name, v]) => (v === undefined ? [] : [[name, v] as [string, number]]));
    naives.push(['mean', mase(rounded(new Array<number>(p.h).fill(mean(known))))]);
    const byMethod = Object.fromEntries(naives);
    const [bestNaiveName, bestNaive] = naives.sort((x, y) => x[1] - y[1])[0]!;
    const fallback = a.naive['seasonal naive'] ?? a.naive.naive!;
    const r: SeriesRow['r'] = {};
    const rMark: SeriesRow['rMark'] = {};
    for (const [model] of R_MODELS) {
      const fit = peers?.[p.id]?.[k]?.[model];
      if (!fit) continue;
      const usable = (fit.status === 'ok' || fit.status.startsWith('fallback')) && fit.pred.length === p.h && fit.pred.every(Number.isFinite);
      if (usable) {
        r[model] = mase(rounded(fit.pred));
        if (fit.status.startsWith('fallback')) rMark[model] = '†';
      } else {
        r[model] = fallback;
        rMark[model] = '*';
      }
    }
    return {
      key: s.key.join(' / ') || p.id,
      known: known.length,
      scale: a.scale,
      ...(a.ours === undefined ? {} : { ours: a.ours }),
      ...(withoutX[k]!.ours === undefined ? {} : { oursNoX: withoutX[k]!.ours }),
      bestNaive,
      bestNaiveName,
      naives: byMethod,
      r,
      rMark,
    };
  });
}

/** The one naive method with the lowest mean over the series (chosen in hindsight per panel, not per series), and that mean. */
function bestMethodOf(series: SeriesRow[]): { name: string; value: number } | undefined {
  const names = [...new Set(series.flatMap((s) => Object.keys(s.naives)))].filter((name) => series.every((s) => s.naives[name] !== undefined));
  const means = names.map((name) => ({ name, value: mean(series.map((s) => s.naives[name]!)) }));
  return means.sort((a, b) => a.value - b.value)[0];
}

/** Means over a case's scored series (scale > 0); undefined where any of them lacks the column. */
function caseMeans(c: CaseResult) {
  const scored = c.series.filter((s) => s.scale > 0);
  const of = (pick: (s: SeriesRow) => number | undefined) => {
    const v = scored.map(pick);
    return v.length > 0 && v.every((x): x is number => x !== undefined) ? mean(v) : undefined;
  };
  return {
    scored: scored.length,
    ours: of((s) => s.ours),
    oursForecast: scored.filter((s) => s.ours !== undefined).length,
    oursNoX: of((s) => s.oursNoX),
    oursNoXForecast: scored.filter((s) => s.oursNoX !== undefined).length,
    bestNaive: of((s) => s.bestNaive),
    bestMethod: bestMethodOf(scored),
    r: Object.fromEntries(R_MODELS.map(([m]) => [m, of((s) => s.r[m])])) as Record<RModel, number | undefined>,
  };
}

// ---------------------------------------------------------------------------------------------------------
// Table

const frequencyOf = (p: DriverPanel) => `${p.frequency}, h ${p.h}${p.season > 1 ? `, season ${p.season}` : ''}`;

function oursCell(run: OursRun, value: number | undefined, forecast: number, scored: number, wins: boolean): string {
  if (run.status === 'timeout') return `timeout (> ${TIME_LIMIT_S} s)`;
  if (run.status === 'failed') return `FAILED: ${(run.error ?? '').replace(/\|/g, '/').slice(0, 160)}`;
  const partial = forecast < scored ? ` (only ${forecast}/${scored} series forecast)` : '';
  const families = wins ? familiesOf(run) : '';
  return `${f3(value)}${partial}${families ? ` [${families}]` : ''}`;
}

/**
 * The winning families: the engine's description of its choice (a panel's names the chosen families and their
 * weights and counts the per-series winners), or the panel report's wins where there is no description.
 */
function familiesOf(run: OursRun): string {
  const description = (run.outputs ?? []).map((o) => o.chosen).join('; ');
  if (description) return description.replace(/\|/g, '/').slice(0, 220);
  return Object.entries(run.panel?.wins ?? {})
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}

function marks(c: CaseResult, model: RModel): string {
  const failed = c.series.filter((s) => s.rMark[model] === '*').length;
  const fellBack = c.series.filter((s) => s.rMark[model] === '†').length;
  return `${failed > 0 ? ` *${failed}` : ''}${fellBack > 0 ? ` †${fellBack}` : ''}`;
}

function table(results: CaseResult[]): string {
  const head = ['case', 'series', 'known rows', 'frequency', 'ours with drivers [wins]', 'ours without', 'best naive method (per case)', 'best naive (per series)', ...R_MODELS.map(([, l]) => l), 'ours wall with / without'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i <= 4 ? '---' : '---:')).join('|')}|`];
  for (const c of results) {
    const m = caseMeans(c);
    const knowns = c.series.map((s) => s.known);
    lines.push(
      `| ${[
        `${c.panel.id}${c.panel.single ? ' (single)' : ''}`,
        m.scored < c.series.length ? `${c.series.length} (${m.scored} scored)` : String(c.series.length),
        Math.min(...knowns) === Math.max(...knowns) ? String(knowns[0]) : `${Math.min(...knowns)}-${Math.max(...knowns)}`,
        `${frequencyOf(c.panel)}, ${c.panel.covariates.length} covariate${c.panel.covariates.length > 1 ? 's' : ''}`,
        oursCell(c.ours, m.ours, m.oursForecast, m.scored, true),
        oursCell(c.oursNoX, m.oursNoX, m.oursNoXForecast, m.scored, false),
        m.bestMethod ? `${f3(m.bestMethod.value)} (${m.bestMethod.name})` : '-',
        f3(m.bestNaive),
        ...R_MODELS.map(([model]) => `${f3(m.r[model])}${marks(c, model)}`),
        `${(c.ours.wallMs / 1000).toFixed(1)} s / ${(c.oursNoX.wallMs / 1000).toFixed(1)} s`,
      ].join(' | ')} |`,
    );
  }
  for (const [label, subset] of [
    ['all cases', results],
    ['panels only', results.filter((c) => !c.panel.single)],
  ] as const) {
    const done = subset.map((c) => ({ c, m: caseMeans(c) })).filter(({ m }) => m.ours !== undefined);
    if (done.length === 0) continue;
    const columns: [string, (m: ReturnType<typeof caseMeans>) => number | undefined][] = [
      ['ours without', (m) => m.oursNoX],
      ['best naive method', (m) => m.bestMethod?.value],
      ['best naive per series', (m) => m.bestNaive],
      ...R_MODELS.map(([model]) => [model, (m: ReturnType<typeof caseMeans>) => m.r[model]] as [string, (m: ReturnType<typeof caseMeans>) => number | undefined]),
    ];
    const meanOf = (pick: (m: ReturnType<typeof caseMeans>) => number | undefined) => {
      const v = done.map(({ m }) => pick(m));
      return v.every((x): x is number => x !== undefined) ? mean(v) : undefined;
    };
    const geo = (pick: (m: ReturnType<typeof caseMeans>) => number | undefined) => {
      const v = done.map(({ m }) => [m.ours!, pick(m)] as const);
      return v.every(([, b]) => b !== undefined && b > 0) ? geometricMean(v.map(([a, b]) => a / b!)) : undefined;
    };
    const left = subset.length - done.length;
    lines.push(
      `| **mean over ${label}** (${done.length}${left > 0 ? `; ${left} without a whole forecast of ours, left out` : ''}) | | | | ${f3(mean(done.map(({ m }) => m.ours!)))} | ${columns.map(([, pick]) => f3(meanOf(pick))).join(' | ')} | |`,
      `| **geo-mean ours with drivers / column** over ${label} | | | | 1 | ${columns.map(([, pick]) => { const g = geo(pick); return g === undefined ? '-' : g.toFixed(3); }).join(' | ')} | |`,
    );
  }
  return lines.join('\n');
}

function notes(results: CaseResult[], skipped: string[]): string {
  const lines = results.map((c) => {
    const phases = describePhases(c.ours);
    const rTimes = R_MODELS.map(([m, l]) => `${l} ${(c.rSeconds[m] ?? 0).toFixed(1)} s`).join(', ');
    const wins = familiesOf(c.oursNoX);
    return `- ${c.panel.id}: ${c.panel.label}. Covariates ${c.panel.covariates.join(', ')} (${c.panel.why}); source ${c.panel.source}; ${c.rows} rows. Ours ${c.ours.status}${phases ? ` (${phases})` : ''}, load ${c.ours.load}; its covariate-aware candidates' backtest error (engine's metric; n/a = did not apply): ${covariateFamilies(c.ours)}${c.ours.engineNotes?.length ? `; engine's notes: ${c.ours.engineNotes.join(' / ')}` : ''}. Without drivers ${c.oursNoX.status}${wins ? ` [${wins}]` : ''}. R fit time summed: ${rTimes}.`;
  });
  return [...lines, ...skipped.map((s) => `- skipped: ${s}`)].join('\n');
}

function perSeries(results: CaseResult[]): string {
  const lines = [
    `| case | series | known | scale | ours with | ours without | best naive | ${R_MODELS.map(([, l]) => l).join(' | ')} |`,
    `|---|---|---:|---:|---:|---:|---:|${R_MODELS.map(() => '---:').join('|')}|`,
  ];
  for (const c of results)
    for (const s of c.series)
      lines.push(
        `| ${c.panel.id} | ${s.key} | ${s.known} | ${s.scale > 0 ? s.scale.toPrecision(4) : '0 (not scored)'} | ${f3(s.ours)} | ${f3(s.oursNoX)} | ${f3(s.bestNaive)} ${s.bestNaiveName} | ${R_MODELS.map(([m]) => `${f3(s.r[m])}${s.rMark[m] ?? ''}`).join(' | ')} |`,
      );
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------------------

async function speedCase(): Promise<string> {
  const panel = speedPanel();
  const lines = [
    `| speed case | series | rows | target | wall | met | engine's phases | load | mean MASE ours / seasonal naive | wins |`,
    '|---|---:|---:|---:|---:|---|---|---:|---|---|',
  ];
  for (const withDrivers of [true, false]) {
    const upload = driversUploadOf(panel, withDrivers);
    const ours = await runOurs(`drivers-speed${withDrivers ? '' : '-nox'}`, upload, null);
    const scores = scorePanel(panel, ours, null).filter((s) => s.scale > 0);
    const oursMean = scores.every((s) => s.ours !== undefined) ? mean(scores.map((s) => s.ours!)) : undefined;
    const naiveMean = mean(scores.map((s) => s.naive['seasonal naive'] ?? s.naive.naive!));
    const wall = ours.status === 'ok' ? `${(ours.wallMs / 1000).toFixed(1)} s` : ours.status === 'timeout' ? `timeout (> ${TIME_LIMIT_S} s)` : `FAILED: ${(ours.error ?? '').slice(0, 120)}`;
    const line = `| ${withDrivers ? panel.label : `the same without its covariates`} | ${panel.series.length} | ${upload.rows.length} | <= ${SPEED_TARGET_S} s | ${wall} | ${ours.status === 'ok' && ours.wallMs <= SPEED_TARGET_S * 1000 ? 'yes' : 'NO'} | ${describePhases(ours) || '-'} | ${ours.load} | ${f3(oursMean)} / ${f3(naiveMean)} | ${familiesOf(ours).slice(0, 100)} |`;
    console.log(line);
    lines.push(line);
  }
  return lines.join('\n');
}

export async function benchDrivers() {
  mkdirSync(OUT, { recursive: true });
  const commit = commitOf();
  const started = new Date().toISOString();
  const header = `\`npm run bench drivers\` — ${started}, commit ${commit}, ours in-process (trainModel in a child process, limit ${TIME_LIMIT_S} s), R forecast 8.20 (limit ${LIMIT} s per fit), load at start ${uptime()}`;
  console.log(header);
  const skipped: string[] = [];
  const cases: DriverPanel[] = [];
  if (SPEED !== 'only')
    for (const [id, make] of Object.entries(DRIVER_CASES).filter(([id]) => !ONLY || ONLY.test(id))) {
      const made = make();
      if (typeof made === 'string') skipped.push(`${id}: ${made}`);
      else cases.push(made);
    }
  const peers = PEERS === '0' || cases.length === 0 ? null : await runRPeers(cases);
  const results: CaseResult[] = [];
  for (const panel of cases) {
    const upload = driversUploadOf(panel, true);
    const ours = await runOurs(`drivers-${panel.id}`, upload, null);
    const oursNoX = await runOurs(`drivers-${panel.id}-nox`, driversUploadOf(panel, false), null);
    const rSeconds: CaseResult['rSeconds'] = {};
    for (const [model] of R_MODELS) {
      const fits = Object.values(peers?.[panel.id] ?? {}).map((m) => m[model]);
      // Panel models hold the same fit (and seconds) in every series: counted once.
      rSeconds[model] = model.startsWith('fe_') ? (fits[0]?.seconds ?? 0) : fits.reduce((a, f) => a + (f?.seconds ?? 0), 0);
    }
    const result: CaseResult = { panel, rows: upload.rows.length, ours, oursNoX, series: scoreCase(panel, ours, oursNoX, peers), rSeconds };
    results.push(result);
    const m = caseMeans(result);
    console.log(`${panel.id}: ${panel.series.length} series, ${upload.rows.length} rows: ours ${oursCell(ours, m.ours, m.oursForecast, m.scored, true)} in ${(ours.wallMs / 1000).toFixed(1)} s; without drivers ${oursCell(oursNoX, m.oursNoX, m.oursNoXForecast, m.scored, false)} in ${(oursNoX.wallMs / 1000).toFixed(1)} s; load ${uptime()}`);
  }
  const speed = SPEED === '0' ? '' : await speedCase();
  const legend =
    'MASE per series (scale: in-sample MAE of the seasonal naive of the known values, lag 1 without a season), mean over the case\'s series. `*n`: the peer failed on n series, scored there as the seasonal naive; `†n`: auto.arima with xreg errored on n series and auto.arima(y) was used. Ratio rows: geometric mean over cases of ours-with-drivers mean / that column\'s mean (< 1: ours better).';
  const markdown = [
    header,
    '',
    results.length > 0 ? table(results) : '(no cases)',
    '',
    legend,
    '',
    notes(results, skipped),
    '',
    speed,
    '',
    `Load at the end ${uptime()}.`,
  ].join('\n');
  writeFileSync(join(OUT, 'drivers.md'), `${markdown}\n\n${perSeries(results)}\n`);
  console.log(`\n${markdown}\n\n(per series: bench/.out/drivers.md)`);
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchDrivers();
}
