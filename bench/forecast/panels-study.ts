/**
 * A study of per-series selection on the panels (issue 33): for every series of every panel, each candidate's
 * backtest predictions (as the engine scores them, with the global model's), its forecast of the hidden values
 * (each candidate refitted on every known row, as finishSeries does for a winner), and the engine's forecast as
 * each series' own choice makes it (scoreSeries): a panel of 4 or more series that then chooses one structure
 * across them (panel-part.ts choosePanel, selection.ts pooledStructure) forecasts otherwise, and only
 * `npm run bench panels` measures that (214 countries' population at 0c9a438: 0.857 here, 0.702 there).
 * A selection rule (pooled across a panel's series, a fixed combination, ...) can then be tried offline on the
 * stored candidates in seconds, without refitting anything; the rules kept in selection.ts were measured so.
 * Scores are the panel benchmark's (panels.ts: MASE on the hidden values, the seasonal naive's in-sample scale).
 *
 *   npx tsx bench/forecast/panels-study.ts collect [regex]   writes bench/.out/panels-study.json (panels by id)
 *   npx tsx bench/forecast/panels-study.ts                   per panel: the engine, the oracle, each family alone
 *   npx tsx bench/forecast/panels-study.ts parity            each of our families alone against R's own of it
 * The parity mode reads R's per-series scores from the panel benchmark's files of the same panels
 * (bench/.out/panels.json, panels-extra.json, panels-fresh.json: `npm run bench panels` with and without
 * BENCH_PANELS_EXTRA=1 and BENCH_PANELS_FRESH=1), so it checks the families' fits apart from the choice among them.
 * BENCH_PANELS_EXTRA=1 collects the validation panels (panels-data.ts EXTRA_PANELS) too, marked as such;
 * BENCH_PANELS_FRESH=1 the fresh held-out panels (panels-data.ts FRESH_PANELS), marked the same way.
 * BENCH_PANELS_ORIGIN=k (collect and report) studies every panel k horizons earlier, as the panel benchmark's runs
 * at that origin (panels.ts atOrigin; a panel too short to step back is left out), in panels-study-origink.json.
 *
 *   npx tsx bench/forecast/panels-study.ts choice [RULE]    the several-origins bar of a selection rule, offline
 *   npx tsx bench/forecast/panels-study.ts compare BASE EXP  the same bar between two checkouts' studies (each collected
 *                                                            at the origins 0-3), for an engine change
 *   npx tsx bench/forecast/panels-study.ts hindsight         ours, our best family and R's best model in hindsight
 *                                                            over the origins, by panel size (needs the panel runs too)
 *   npx tsx bench/forecast/panels-study.ts optimism          how much each family's backtest flatters it, by panel size
 * The engine's choice (each series' own, or one structure across a panel of MIN_POOLED_SERIES or more) is
 * rebuilt from the stored candidates at every origin collected (0-3), and a RULE's choice is compared with it
 * panel-origin by panel-origin as panels-origins.ts compare does in the engine; without a RULE, the rebuilt choice
 * per panel at origin 0, to check against `npm run bench panels`. Rules:
 *   without:FAMILY[,FAMILY]   the families leave every panel
 *   window-median             candidates ranked by the median of their windows' errors
 *   median-of-3               a series' own choice is the median of its 3 best
 *   partial:L:M               in panels of M or more series each series ranks its structures by L x its own scaled
 *                             backtest error + (1 - L) x the panel's mean
 *   rescored                  the engine's choice rebuilt by `rescored` (a check: it changes nothing)
 *   geometric                 the choice across series by the geometric mean of the scaled errors (AvgRelMAE)
 *   recent:D                  each older backtest window weighs D of the next
 *   seasonal-scale            the choice across series scales each series by the benchmark's MASE scale (the
 *                             seasonal naive's in-sample MAE) instead of the one-step naive's
 *   stack:K[:STEP]            across series, the best weights on a STEP grid (default 0.1) of the K best families
 *   random-walk:ALPHA         a series whose first differences the Ljung-Box test (lags min(10, n/5)) does not
 *                             find autocorrelated at ALPHA chooses between the last value and drift alone
 *   fixed:F[,F][:median]      every series the mean (or median) of the families, where all forecast it
 *   fixed-small:F[,F][:median]  the same for the series of panels under MIN_POOLED_SERIES (each series' own choice)
 *   hedge                     in panels of 2 or 3 series, the mean of each series' own choice and the choice across
 *                             the panel's series (where neither is a median)
 *   own-with:FAMILY[,FAMILY]  in panels of 2 or 3 series, each series' own choice takes these families that otherwise
 *                             compete only across series (selection.ts POOLED_ONLY) too
 *   own-only:FAMILY[,FAMILY]  in panels of 2 or 3 series, each series' own choice among these families alone
 *   own-single                in panels of 2 or 3 series, each series' own choice is its best family alone (no
 *                             combination)
 *   top:K[:median|:inverse]   in panels of 2 or 3 series, each series' own choice is the mean (median, weights by
 *                             inverse backtest error) of its K best families by backtest error
 * An estimate: a rule that clears it offline must still clear panels-origins.ts in the engine.
 */
import { createHash } from 'node:crypto';
import jStat from 'jstat';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CellReader } from '../../src/training/core/encoder.js';
import { precomputedGlobalFamily, type GlobalForecastState } from '../../src/training/models/global-forecast.js';
import { detectKeys, planPanel, runGlobalRounds, seriesPlan } from '../../src/training/panel/panel.js';
import type { GlobalResult } from '../../src/training/panel/panel-part.js';
import type { Backtest } from '../../src/training/selection/backtest.js';
import {
  backtestError,
  chooseWinner,
  combineRow,
  compareErrors,
  LEVEL_NAMES,
  MAX_COMBINED,
  MIN_POOLED_SERIES,
  pooledStructure,
  ONE_ROW,
  POOLED_ONLY,
  splitsError,
  type Scored,
  type SelectionOptions,
} from '../../src/training/selection/selection.js';
import { medianOf } from '../../src/training/models/naive.js';
import { analyse } from '../../src/training/core/series.js';
import { finishSeries, prepareSeries, scoreSeries, WorkMeter, type OutputRun, type PreparedSeries } from '../../src/training/series/series-run.js';
import { parseNumber } from '../../src/training/core/values.js';
import { withDateCache } from '../../src/training/core/dates.js';
import { inputOf } from './datasets.js';
import { EXTRA_PANELS, FRESH_PANELS, PANELS, uploadOf, type Panel } from './panels-data.js';
import { OUT } from './panels-ours.js';
import { atOrigin, keepsEnoughAtOrigin, ORIGIN } from './panels.js';
import { barOf, moved, panelOrigins } from './panels-origins.js';

export interface Candidate {
  name: string;
  error: number | null;
  /** Backtest predictions per split. */
  bt: number[][] | null;
  /** Forecast of the hidden values (null: not refitted). */
  final: number[] | null;
}

export interface StudySeries {
  panel: string;
  extra: boolean;
  key: string;
  /** The bench's MASE scale (panels.ts scaleOf). */
  scale: number;
  /** MAE of the one-step naive on the known rows (the engine's panel scale). */
  naiveScale: number;
  known: number;
  /** The known values (the engine's target rows). */
  y: number[];
  truth: number[];
  /** Backtest: the actual values of each split's test rows. */
  btActual: number[][];
  /** Backtest steps (1-based) of each split's test rows. */
  btSteps: number[][];
  candidates: Candidate[];
  engine: number[];
}

/** The study of the panels k horizons earlier (panels.ts atOrigin, BENCH_PANELS_ORIGIN), each origin in a file of its own. */
const studyFile = (k: number, out = OUT) => join(out, k > 0 ? `panels-study-origin${k}.json` : 'panels-study.json');
/** The origins a study is collected at, as panels-origins.ts runs the engine. */
const STUDY_ORIGINS = [0, 1, 2, 3];
const FILE = studyFile(ORIGIN);

function scaleOf(known: number[], lag: number): number {
  let sum = 0;
  for (let t = lag; t < known.length; t++) sum += Math.abs(known[t]! - known[t - lag]!);
  return sum / Math.max(1, known.length - lag);
}

function globalScored(prep: PreparedSeries, column: string, s: number, rounds: number, global: GlobalResult): Scored | null {
  const splits = prep.backtest.splits;
  const predictions = splits.map((_, k) => global.predictions[rounds - 1 - splits.length + k]![s]!);
  if (predictions.some((p, k) => p.length !== splits[k]!.test.length || p.some((v) => !Number.isFinite(v)))) return null;
  const futureTimes = prep.placement.targets.map((t) => t.time);
  const values = global.predictions[rounds - 1]![s]!;
  if (values.length !== futureTimes.length || values.some((v) => !Number.isFinite(v))) return null;
  const state: GlobalForecastState = { first: futureTimes[0]!, values, description: global.description };
  const actual = prep.analysis.known.map((i) => parseNumber((prep.analysis.readers[i] as CellReader)(column)) as number);
  return { family: precomputedGlobalFamily(state), predictions, error: backtestError(prep.backtest, actual, predictions), description: global.description };
}

/** Each scored candidate's forecast of the rows to forecast: finishSeries with that candidate as every output's winner. */
function finals(prep: PreparedSeries, runs: OutputRun[]): Map<string, Map<string, number[]>> {
  const byFamily = new Map<string, Map<string, number[]>>();
  const names = new Set(runs.flatMap((r) => r.scored.filter((s) => s.predictions).map((s) => s.family.name)));
  for (const name of names) {
    const swapped = runs.map((run) => {
      const s = run.scored.find((x) => x.family.name === name && x.predictions) ?? run.scored.find((x) => x.predictions)!;
      return { ...run, winner: { members: [{ family: s.family, weight: 1 }], predictions: s.predictions!, error: s.error!, description: s.description } };
    });
    const meter = new WorkMeter(1e12, {});
    const { result } = finishSeries(prep, swapped, meter, performance.now());
    const columns = new Map<string, number[]>();
    for (const run of runs) columns.set(run.column, result.forecasts.map((f) => Number(f.values[run.column])));
    byFamily.set(name, columns);
  }
  return byFamily;
}

function seriesOf(p: Panel, extra: boolean, k: number, prep: PreparedSeries, run: OutputRun, fin: Map<string, Map<string, number[]>>, engine: number[]): StudySeries {
  const s = p.series[k]!;
  const known = s.values.slice(0, -p.h);
  const truth = s.values.slice(-p.h);
  const lag = p.season > 1 && known.length >= 2 * p.season ? p.season : 1;
  const y = run.data.target as number[];
  let sum = 0;
  for (let i = 1; i < y.length; i++) sum += Math.abs(y[i]! - y[i - 1]!);
  return {
    panel: p.id,
    extra,
    key: s.key.join(' / '),
    scale: scaleOf(known, lag),
    naiveScale: y.length > 1 && sum > 0 ? sum / (y.length - 1) : 1,
    known: known.length,
    y,
    truth,
    btActual: prep.backtest.splits.map((sp) => sp.test.map((i) => y[i]!)),
    btSteps: prep.backtest.splits.map((sp) => sp.steps),
    candidates: run.scored.map((c) => ({
      name: c.family.name,
      error: c.error,
      bt: c.predictions as number[][] | null,
      final: fin.get(c.family.name)?.get(run.column)?.slice(-p.h) ?? null,
    })),
    engine,
  };
}

/** engine.ts seedOf: the seed the engine derives from an upload. */
function seedOf(input: ReturnType<typeof inputOf>): number {
  const hash = createHash('sha256');
  hash.update(JSON.stringify([input.header, input.columns, input.params]));
  for (const row of input.rows) hash.update(JSON.stringify(row));
  return hash.digest().readUInt32LE(0);
}

function collectPanel(p: Panel, extra: boolean): StudySeries[] {
  return withDateCache(() => {
    const input = inputOf(uploadOf(p));
    const seed = seedOf(input);
    const analysis = analyse(input);
    const out: StudySeries[] = [];
    const grouping = detectKeys(input, analysis);
    const winnerFinal = (run: OutputRun, fin: Map<string, Map<string, number[]>>) => {
      const w = run.winner;
      const cols = w.members.map((m) => fin.get(m.family.name)!.get(run.column)!);
      return cols[0]!.map((_, j) => combineRow(cols.map((c) => c[j]!), w.members.map((m) => m.weight), w.combine));
    };
    if (!grouping) {
      const outputs = analysis.columns.filter((c) => c.role === 'output').length;
      const prep = prepareSeries(input, analysis, seed, seriesPlan(outputs, outputs * analysis.known.length));
      const runs = scoreSeries(prep, new WorkMeter(1e12, {}));
      const fin = finals(prep, runs);
      runs.forEach((run) => {
        const k = p.series.findIndex((s) => s.key[0] === run.column);
        out.push(seriesOf(p, extra, k, prep, run, fin, winnerFinal(run, fin).slice(-p.h)));
      });
      return out;
    }
    const planned = planPanel(input, grouping, seed, { keepPrepared: true });
    const meter = new WorkMeter(1e12, {});
    const global = planned.global ? runGlobalRounds(planned.global.task, meter, 1) : null;
    for (const { part } of planned.parts) {
      for (const m of part.members) {
        const prep = planned.prepared.get(m.index)!.prep!;
        const runs = scoreSeries(prep, meter, (column) => {
          const s = m.global?.[column];
          const scored = s === undefined || !global ? null : globalScored(prep, column, s, part.globalRounds, global);
          return scored ? [scored] : [];
        });
        const fin = finals(prep, runs);
        const run = runs[0]!;
        out.push(seriesOf(p, extra, m.index, prep, run, fin, winnerFinal(run, fin).slice(-p.h)));
      }
    }
    return out;
  });
}

// ---------------------------------------------------------------------------------------------------------
// Comparing

export const maseOf = (s: StudySeries, pred: number[]) => pred.reduce((a, v, i) => a + Math.abs(v - s.truth[i]!), 0) / s.truth.length / s.scale;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Per panel: the engine's mean MASE, the per-series oracle among the candidates (the best forecast in hindsight),
 * and each family alone, by its panel-wide mean scaled backtest error (the error over the series' one-step naive
 * MAE, as the panel's report ranks them) next to its mean MASE on the hidden values.
 */
function report(all: StudySeries[]) {
  const panels = [...new Set(all.map((s) => s.panel))];
  const totals = { engine: [] as number[], oracle: [] as number[] };
  for (const id of panels) {
    const series = all.filter((s) => s.panel === id && s.scale > 0);
    const usable = (s: StudySeries) => s.candidates.filter((c) => c.final && c.error !== null);
    const engine = mean(series.map((s) => maseOf(s, s.engine)));
    const oracle = mean(series.map((s) => Math.min(...usable(s).map((c) => maseOf(s, c.final!)))));
    totals.engine.push(engine);
    totals.oracle.push(oracle);
    const families = new Map<string, { backtest: number[]; hidden: number[] }>();
    for (const s of series)
      for (const c of usable(s)) {
        let f = families.get(c.name);
        if (!f) families.set(c.name, (f = { backtest: [], hidden: [] }));
        f.backtest.push(c.error! / s.naiveScale);
        f.hidden.push(maseOf(s, c.final!));
      }
    const ranked = [...families.entries()].sort((a, b) => mean(a[1].backtest) - mean(b[1].backtest));
    console.log(`${id}${series[0]?.extra ? ' (validation)' : ''}: ${series.length} series, engine ${engine.toFixed(3)}, per-series oracle ${oracle.toFixed(3)}`);
    for (const [name, f] of ranked) console.log(`  ${name.padEnd(20)} on ${String(f.hidden.length).padStart(3)}: backtest ${mean(f.backtest).toFixed(3)}, hidden ${mean(f.hidden).toFixed(3)}`);
  }
  console.log(`mean over ${panels.length} panels: engine ${mean(totals.engine).toFixed(4)}, per-series oracle ${mean(totals.oracle).toFixed(4)}`);
}

/** Our families and R's forecast-package counterparts: auto.arima's search ported (sarima-search.ts), ETS, Theta, STL. */
const COUNTERPARTS = [
  ['sarima', 'auto_arima'],
  ['ets', 'ets'],
  ['theta', 'theta'],
  ['mstl', 'stlf'],
] as const;

/** The panel benchmark's per-series R scores (panels.ts StoredRun), by panel id and series key. */
function rScores(): Map<string, Partial<Record<string, number>>> {
  const out = new Map<string, Partial<Record<string, number>>>();
  for (const file of ['panels.json', 'panels-extra.json', 'panels-fresh.json']) {
    const path = join(OUT, file);
    if (!existsSync(path)) continue;
    const run = JSON.parse(readFileSync(path, 'utf8')) as { results: { id: string; series: { key: string; r: Partial<Record<string, number>> }[] }[] };
    for (const result of run.results) for (const series of result.series) out.set(`${result.id}\t${series.key}`, series.r);
  }
  return out;
}

/**
 * Each of our statistical families alone (its forecast of the hidden values, refitted on every known row)
 * against R's own implementation of it, per panel over the series where both forecast: the mean MASE of each,
 * then the geometric mean over panels of ours / R's and the panels where ours is at or below R's.
 */
function parity(all: StudySeries[]) {
  const r = rScores();
  const totals = new Map<string, number[]>();
  for (const id of [...new Set(all.map((s) => s.panel))]) {
    const cells: string[] = [];
    for (const [ours, theirs] of COUNTERPARTS) {
      const pairs = all
        .filter((s) => s.panel === id && s.scale > 0)
        .flatMap((s) => {
          const final = s.candidates.find((c) => c.name === ours)?.final;
          const peer = r.get(`${id}\t${s.key}`)?.[theirs];
          return final && peer !== undefined && Number.isFinite(peer) ? [[maseOf(s, final), peer] as const] : [];
        });
      if (pairs.length === 0) continue;
      const a = mean(pairs.map((p) => p[0]));
      const b = mean(pairs.map((p) => p[1]));
      let ratios = totals.get(ours);
      if (!ratios) totals.set(ours, (ratios = []));
      ratios.push(a / b);
      cells.push(`${ours} ${a.toFixed(3)} / R ${theirs} ${b.toFixed(3)} on ${pairs.length}`);
    }
    if (cells.length > 0) console.log(`${id}: ${cells.join('; ')}`);
  }
  for (const [ours, ratios] of totals) {
    const geometric = Math.exp(mean(ratios.map(Math.log)));
    console.log(`${ours}: ${ratios.length} panels, geometric mean of ours / R's ${geometric.toFixed(3)}, ours at or below R's on ${ratios.filter((x) => x <= 1).length}`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// The choice rebuilt offline (mode `choice`)

/** A selection rule tried offline: candidates it leaves out, or a series' whole choice (null: the engine's). */
interface ChoiceRule {
  keep?: (name: string) => boolean;
  /** A candidate's backtest error as the rule ranks it (default: the stored one, the mean over its windows' rows). */
  errorOf?: (s: StudySeries, predictions: number[][]) => number;
  choose?: (s: StudySeries, panel: StudySeries[]) => Structure | null;
  /** A series' error scale in the choice across series (default: its one-step naive's MAE). */
  scaleOf?: (s: StudySeries) => number;
  /** Whether a series takes part in the choice across series (default: all). */
  pool?: (s: StudySeries) => boolean;
}

interface Structure {
  names: string[];
  weights: number[];
  combine?: 'median';
}

/** A stand-in backtest over a series' stored windows: splitActuals reads its test rows from the flattened actuals. */
function backtestOf(s: StudySeries): Backtest {
  let row = 0;
  const splits = s.btActual.map((actual, k) => ({ fit: [], test: actual.map(() => row++), steps: s.btSteps[k]! }));
  return { scheme: 'rolling-origin', splits, horizon: Math.max(...s.btActual.map((a) => a.length)) };
}

/**
 * A series' own choice (selection.ts chooseWinner) among stored candidates. chooseWinner leaves out every POOLED_ONLY
 * family: those `admitted` compete under a name it does not know and are named again in the structure.
 */
function ownChoice(s: StudySeries, candidates: readonly Candidate[], options: SelectionOptions | undefined, admitted: ReadonlySet<string> = new Set()): Structure {
  const alias = (name: string) => (admitted.has(name) ? `${name}*` : name);
  const scored = candidates.map((c) => ({ family: { name: alias(c.name) }, predictions: c.bt, error: c.error, description: c.name })) as unknown as Scored[];
  const winner = chooseWinner(scored, backtestOf(s), { time: [], features: [], target: s.btActual.flat() }, 'numeric', options);
  return { names: winner.members.map((m) => m.family.name.replace(/\*$/, '')), weights: winner.members.map((m) => m.weight), combine: winner.combine };
}

const usable = (s: StudySeries, name: string) => s.candidates.some((c) => c.name === name && c.bt && c.error !== null && Number.isFinite(c.error) && c.final);
const membersOf = (s: StudySeries, st: Structure) => st.names.map((name) => s.candidates.find((c) => c.name === name)!);
const finalOf = (s: StudySeries, st: Structure) => {
  const members = membersOf(s, st);
  return s.truth.map((_, j) => combineRow(members.map((m) => m.final![j]!), st.weights, st.combine));
};
const scaledError = (s: StudySeries, st: Structure) => {
  const members = membersOf(s, st);
  const predictions = s.btActual.map((actual, k) => actual.map((_, j) => combineRow(members.map((m) => m.bt![k]![j]!), st.weights, st.combine)));
  return splitsError(s.btActual, predictions) / s.naiveScale;
};

/** Each series' MASE under the engine's choice (selection.ts chooseWinner and pooledStructure), less the candidates a rule leaves out. */
function engineChoice(series: StudySeries[], rule: ChoiceRule = {}): number[] {
  const options = seriesPlan(series.length, 0).selection;
  const kept = (s: StudySeries) =>
    s.candidates.filter((c) => usable(s, c.name) && (!rule.keep || rule.keep(c.name))).map((c) => (rule.errorOf ? { ...c, error: rule.errorOf(s, c.bt!) } : c));
  const own = (s: StudySeries) => ownChoice(s, kept(s), options);
  const outputs = series.filter((s) => !rule.pool || rule.pool(s)).map((s) => ({ scored: kept(s).map((c) => ({ family: { name: c.name }, predictions: c.bt, error: c.error })), actual: s.btActual, scale: rule.scaleOf ? rule.scaleOf(s) : s.naiveScale }));
  const structure = pooledStructure(outputs, options);
  return series.map((s) => {
    const chosen = rule.choose?.(s, series) ?? (structure && (!rule.pool || rule.pool(s)) ? { names: structure.members, weights: structure.weights, combine: structure.combine } : own(s));
    return maseOf(s, finalOf(s, chosen));
  });
}

/**
 * A series' structures ranked by score (the best alone, the best 2 and 3 by inverse score, the median of 3), as
 * chooseWinner builds them; `own`: ties between single families go as in a series' own choice (chooseWinner: not
 * to the last value or drift), else as across series (pooledStructure: to the earlier family).
 */
function structuresBy(names: string[], score: (st: Structure) => number, own = false): Structure[] {
  const oneRow = (name: string) => (own && ONE_ROW.has(name) ? 1 : 0);
  const singles = names
    .map((name, order) => ({ name, order, e: score({ names: [name], weights: [1] }) }))
    .sort((a, b) => compareErrors(a.e, b.e) || oneRow(a.name) - oneRow(b.name) || a.order - b.order);
  const combinable = singles.filter((x) => !LEVEL_NAMES.has(x.name));
  const out: Structure[] = [{ names: [singles[0]!.name], weights: [1] }];
  for (let m = 2; m <= Math.min(MAX_COMBINED, combinable.length); m++) {
    const inverse = combinable.slice(0, m).map((x) => 1 / Math.max(x.e, 1e-12));
    const total = inverse.reduce((a, b) => a + b, 0);
    out.push({ names: combinable.slice(0, m).map((x) => x.name), weights: inverse.map((w) => w / total) });
  }
  if (combinable.length >= MAX_COMBINED) out.push({ names: combinable.slice(0, MAX_COMBINED).map((x) => x.name), weights: Array<number>(MAX_COMBINED).fill(1 / MAX_COMBINED), combine: 'median' });
  return out;
}

/** Ljung-Box p-value of x's autocorrelations up to lag min(10, n/5) (Hyndman's rule for a non-seasonal series). */
function ljungBoxP(x: number[]): number {
  const n = x.length;
  const lags = Math.min(10, Math.floor(n / 5));
  if (lags < 1) return 0;
  const m = x.reduce((a, b) => a + b, 0) / n;
  const c0 = x.reduce((a, v) => a + (v - m) ** 2, 0);
  if (!(c0 > 0)) return 1;
  let q = 0;
  for (let k = 1; k <= lags; k++) {
    let c = 0;
    for (let t = k; t < n; t++) c += (x[t]! - m) * (x[t - k]! - m);
    q += (c / c0) ** 2 / (n - k);
  }
  q *= n * (n + 2);
  return 1 - jStat.chisquare.cdf(q, lags);
}

/** A structure's backtest error on a series with each older window weighing `decay` of the next, over its scale. */
function recentError(s: StudySeries, st: Structure, decay: number): number {
  const members = membersOf(s, st);
  let sum = 0;
  let count = 0;
  s.btActual.forEach((actual, k) => {
    const w = decay ** (s.btActual.length - 1 - k);
    actual.forEach((value, j) => {
      sum += w * Math.abs(combineRow(members.map((m) => m.bt![k]![j]!), st.weights, st.combine) - value);
      count += w;
    });
  });
  return sum / count / s.naiveScale;
}

/**
 * The best structure over some series by a score: as a choice across series (`pooled`: the families that compete only
 * there too) or as a series' own (chooseWinner's families and ties).
 */
function structureOver(over: StudySeries[], pooled: boolean, score: (st: Structure) => number): Structure | null {
  const names = over[0]!.candidates.map((c) => c.name).filter((name) => over.every((x) => usable(x, name)) && (pooled || !POOLED_ONLY.has(name)));
  if (names.length === 0) return null;
  return structuresBy(names, score, !pooled).reduce((best, st) => (compareErrors(score(st), score(best)) < 0 ? st : best));
}

/**
 * The engine's choice (a series' own, or one structure across a panel of MIN_POOLED_SERIES or more) rebuilt with
 * another error of a structure on one series and another average of it over the panel's series; `rescored` with
 * the engine's own (scaledError, mean) changes no panel-origin, which checks the rebuilding.
 */
function rescored(errorOn: (s: StudySeries, st: Structure) => number, average: (xs: number[]) => number): ChoiceRule {
  const memo = new Map<StudySeries[], Structure | null>();
  const chosen = (over: StudySeries[], pooled: boolean) => structureOver(over, pooled, (st) => average(over.map((x) => errorOn(x, st))));
  return {
    choose: (s, panel) => {
      if (panel.length < MIN_POOLED_SERIES) return chosen([s], false);
      if (!memo.has(panel)) memo.set(panel, chosen(panel, true));
      return memo.get(panel)!;
    },
  };
}

function ruleOf(text: string): ChoiceRule {
  const [kind, a, b] = text.split(':');
  if (kind === 'without' && a) {
    const out = new Set(a.split(','));
    return { keep: (name) => !out.has(name) };
  }
  if ((kind === 'fixed' || kind === 'fixed-small') && a) {
    const names = a.split(',');
    return {
      choose: (s, panel) =>
        (kind === 'fixed' || panel.length < MIN_POOLED_SERIES) && names.every((name) => usable(s, name))
          ? { names, weights: names.map(() => 1 / names.length), ...(b === 'median' ? { combine: 'median' as const } : {}) }
          : null,
    };
  }
  if (kind === 'seasonal-scale') return { scaleOf: (s) => s.scale };
  if (kind === 'stack' && a) {
    const k = Number(a);
    const step = Number(b ?? '0.1');
    if (!Number.isInteger(k) || k < 2 || !(step > 0 && step <= 0.5)) throw new Error(`stack:K[:STEP] needs a whole K of 2 or more and 0 < STEP <= 0.5, not ${text}`);
    const memo = new Map<StudySeries[], Structure | null>();
    const stacked = (panel: StudySeries[]): Structure | null => {
      if (panel.length < MIN_POOLED_SERIES) return null;
      const names = panel[0]!.candidates.map((c) => c.name).filter((name) => panel.every((x) => usable(x, name)) && !LEVEL_NAMES.has(name));
      if (names.length < k) return null;
      const pooledError = (st: Structure) => mean(panel.map((x) => scaledError(x, st)));
      const ranked = names.map((name) => ({ name, e: pooledError({ names: [name], weights: [1] }) })).sort((x, y) => x.e - y.e).slice(0, k).map((x) => x.name);
      const grid: number[][] = [];
      const units = Math.round(1 / step);
      const walk = (prefix: number[], left: number) => {
        if (prefix.length === k - 1) return void grid.push([...prefix, left].map((u) => u / units));
        for (let u = 0; u <= left; u++) walk([...prefix, u], left - u);
      };
      walk([], units);
      let best: Structure | null = null;
      let bestError = Infinity;
      for (const weights of grid) {
        const st = { names: ranked, weights };
        const e = pooledError(st);
        if (e < bestError - 1e-12) [best, bestError] = [st, e];
      }
      const median = { names: ranked.slice(0, 3), weights: [1 / 3, 1 / 3, 1 / 3], combine: 'median' as const };
      if (k >= 3 && pooledError(median) < bestError - 1e-12) best = median;
      return best;
    };
    return {
      choose: (_s, panel) => {
        if (!memo.has(panel)) memo.set(panel, stacked(panel));
        return memo.get(panel)!;
      },
    };
  }
  if (kind === 'random-walk' && a) {
    const alpha = Number(a);
    if (!(alpha > 0 && alpha < 1)) throw new Error(`random-walk:ALPHA needs 0 < ALPHA < 1, not ${text}`);
    const walks = (s: StudySeries) => ljungBoxP(s.y.slice(1).map((v, i) => v - s.y[i]!)) > alpha;
    const only = new Set(['naive', 'drift']);
    return {
      pool: (s) => !walks(s),
      choose: (s) => {
        if (!walks(s)) return null;
        const candidates = s.candidates.filter((c) => only.has(c.name) && usable(s, c.name));
        return candidates.length === 0 ? null : ownChoice(s, candidates, {});
      },
    };
  }
  if (kind === 'hedge') {
    const own = rescored(scaledError, mean);
    const across = new Map<StudySeries[], Structure | null>();
    return {
      choose: (s, panel) => {
        if (panel.length >= MIN_POOLED_SERIES || panel.length < 2) return null;
        const mine = own.choose!(s, panel);
        if (!across.has(panel)) across.set(panel, structureOver(panel, false, (st) => mean(panel.map((x) => scaledError(x, st)))));
        const theirs = across.get(panel)!;
        if (!mine || !theirs || mine.combine || theirs.combine) return null;
        const weights = new Map<string, number>();
        for (const st of [mine, theirs]) st.names.forEach((name, k) => weights.set(name, (weights.get(name) ?? 0) + st.weights[k]! / 2));
        return { names: [...weights.keys()], weights: [...weights.values()] };
      },
    };
  }
  if (kind === 'own-with' && a) {
    const extra = new Set(a.split(','));
    const bad = [...extra].filter((name) => !POOLED_ONLY.has(name));
    if (bad.length > 0) throw new Error(`own-with:FAMILY[,FAMILY] takes families that compete only across series, not ${bad.join(', ')}`);
    return {
      choose: (s, panel) =>
        panel.length >= MIN_POOLED_SERIES
          ? null
          : ownChoice(
              s,
              s.candidates.filter((c) => usable(s, c.name)),
              seriesPlan(panel.length, 0).selection,
              extra,
            ),
    };
  }
  if (kind === 'own-only' && a) {
    const only = new Set(a.split(','));
    return {
      choose: (s, panel) => {
        if (panel.length >= MIN_POOLED_SERIES) return null;
        const candidates = s.candidates.filter((c) => usable(s, c.name) && only.has(c.name));
        return candidates.length === 0 ? null : ownChoice(s, candidates, seriesPlan(panel.length, 0).selection);
      },
    };
  }
  if (kind === 'own-single')
    return {
      choose: (s, panel) => {
        if (panel.length >= MIN_POOLED_SERIES) return null;
        const names = s.candidates.map((c) => c.name).filter((name) => usable(s, name) && !POOLED_ONLY.has(name));
        return names.length === 0 ? null : structuresBy(names, (st) => scaledError(s, st), true)[0]!;
      },
    };
  if (kind === 'top' && a) {
    const k = Number(a);
    if (!Number.isInteger(k) || k < 2 || (b !== undefined && b !== 'median' && b !== 'inverse')) throw new Error(`top:K[:median|:inverse] needs a whole K of 2 or more, not ${text}`);
    return {
      choose: (s, panel) => {
        if (panel.length >= MIN_POOLED_SERIES) return null;
        const best = s.candidates
          .filter((c) => usable(s, c.name) && !POOLED_ONLY.has(c.name))
          .sort((x, y) => compareErrors(x.error!, y.error!))
          .slice(0, k);
        if (best.length < 2) return null;
        const weights = b === 'inverse' ? best.map((c) => 1 / Math.max(c.error!, 1e-12)) : best.map(() => 1);
        const total = weights.reduce((x, y) => x + y, 0);
        return { names: best.map((c) => c.name), weights: weights.map((w) => w / total), ...(b === 'median' ? { combine: 'median' as const } : {}) };
      },
    };
  }
  if (kind === 'rescored') return rescored(scaledError, mean);
  if (kind === 'geometric') return rescored(scaledError, (xs) => Math.exp(mean(xs.map((x) => Math.log(Math.max(x, 1e-12))))));
  if (kind === 'recent' && a) {
    const decay = Number(a);
    if (!(decay > 0 && decay <= 1)) throw new Error(`recent:D needs 0 < D <= 1, not ${text}`);
    return rescored((s, st) => recentError(s, st, decay), mean);
  }
  if (kind === 'window-median') return { errorOf: (s, predictions) => medianOf(s.btActual.map((actual, k) => splitsError([actual], [predictions[k]!]))) };
  if (kind === 'median-of-3')
    return {
      choose: (s, panel) => {
        if (panel.length >= MIN_POOLED_SERIES) return null;
        const best = s.candidates
          .filter((c) => usable(s, c.name) && !POOLED_ONLY.has(c.name) && !LEVEL_NAMES.has(c.name))
          .sort((x, y) => x.error! - y.error!)
          .slice(0, MAX_COMBINED);
        return best.length < MAX_COMBINED ? null : { names: best.map((c) => c.name), weights: best.map(() => 1 / MAX_COMBINED), combine: 'median' };
      },
    };
  if (kind === 'partial' && a && b) {
    const own = Number(a);
    const from = Number(b);
    if (!(own >= 0 && own <= 1) || !Number.isInteger(from) || from < 2) throw new Error(`partial:L:M needs 0 <= L <= 1 and a whole M of 2 or more, not ${text}`);
    return {
      choose: (s, panel) => {
        if (panel.length < from) return null;
        const names = s.candidates.map((c) => c.name).filter((name) => panel.every((x) => usable(x, name)) && (panel.length >= MIN_POOLED_SERIES || !POOLED_ONLY.has(name)));
        if (names.length === 0) return null;
        const score = (st: Structure) => own * scaledError(s, st) + (1 - own) * mean(panel.map((x) => scaledError(x, st)));
        return structuresBy(names, score).reduce((best, st) => (score(st) < score(best) - 1e-12 ? st : best));
      },
    };
  }
  throw new Error(
    `unknown rule ${text}: without:FAMILY[,FAMILY], window-median, median-of-3, partial:L:M, rescored, geometric, recent:D, seasonal-scale, stack:K[:STEP], random-walk:ALPHA, fixed:FAMILY[,FAMILY][:median], fixed-small:FAMILY[,FAMILY][:median], hedge, own-with:FAMILY[,FAMILY], own-only:FAMILY[,FAMILY], own-single or top:K[:median|:inverse]`,
  );
}

/** The studies collected at the origins 0-3 (those there are), each as its panels' series that have a MASE scale. */
function collectedStudies(): { k: number; panels: StudySeries[][] }[] {
  return STUDY_ORIGINS.filter((k) => existsSync(studyFile(k))).map((k) => {
    const all = JSON.parse(readFileSync(studyFile(k), 'utf8')) as StudySeries[];
    return { k, panels: [...new Set(all.map((s) => s.panel))].map((id) => all.filter((s) => s.panel === id && s.scale > 0)) };
  });
}

function choiceStudy(ruleText?: string) {
  const origins = collectedStudies();
  if (origins[0]?.k !== 0) throw new Error(`no ${studyFile(0)}: run \`npx tsx bench/forecast/panels-study.ts collect\` first`);
  if (!ruleText) {
    for (const series of origins[0].panels) console.log(`${series[0]!.panel}: ${mean(engineChoice(series)).toFixed(3)}`);
    return;
  }
  const rule = ruleOf(ruleText);
  const pairs: [number, number][] = [];
  for (const { k, panels } of origins) {
    for (const series of panels) {
      const means: [number, number] = [mean(engineChoice(series)), mean(engineChoice(series, rule))];
      pairs.push(means);
      if (moved(means)) console.log(`  origin ${k} ${series[0]!.panel}: ${means[0].toFixed(3)} -> ${means[1].toFixed(3)}`);
    }
  }
  const bar = barOf(pairs);
  console.log(`${ruleText} over ${origins.length} origins: ${bar.changed} panel-origins changed, ${bar.better} better, ${bar.worse} worse, geometric mean of the changed ${bar.geomean.toFixed(3)}: ${bar.verdict} offline`);
}

/**
 * Over the collected origins, by panel size (2-3 series choose each their own, 4 or more one structure across them):
 * the engine's mean MASE from the panel runs at the same origins (`npx tsx bench/forecast/panels-origins.ts run
 * --with-r`), our best family alone per panel-origin chosen after seeing the hidden values (from the study), and R's
 * best model per panel-origin chosen the same way (from the panel runs). Where our best family in hindsight is ahead
 * of R's, the fits are good enough and what is short is the choice among them.
 */
function hindsight() {
  const runs = panelOrigins();
  const rows: { small: boolean; ours: number; family: number; r: number }[] = [];
  for (const { k, panels } of collectedStudies()) {
    for (const series of panels) {
      const run = runs.find((row) => row.origin === k && row.id === series[0]?.panel);
      if (series.length === 0 || !run) continue;
      const byFamily = new Map<string, number[]>();
      for (const s of series)
        for (const c of s.candidates) {
          if (!c.final || c.error === null) continue;
          byFamily.set(c.name, [...(byFamily.get(c.name) ?? []), maseOf(s, c.final)]);
        }
      const family = Math.min(...[...byFamily.values()].filter((v) => v.length === series.length).map(mean));
      rows.push({ small: series.length < MIN_POOLED_SERIES, ours: run.ours, r: run.r, family });
    }
  }
  for (const [label, of] of [
    [`panels of 2-${MIN_POOLED_SERIES - 1} series`, rows.filter((row) => row.small)],
    [`panels of ${MIN_POOLED_SERIES} or more`, rows.filter((row) => !row.small)],
    ['all', rows],
  ] as const) {
    console.log(
      `${label}: ${of.length} panel-origins; ours ${mean(of.map((row) => row.ours)).toFixed(3)}, our best family in hindsight ${mean(of.map((row) => row.family)).toFixed(3)}, R's best in hindsight ${mean(of.map((row) => row.r)).toFixed(3)}`,
    );
  }
}

/**
 * Whether a family's backtest flatters it in a way other panels could teach (a prior a series' own choice could
 * borrow, as FFORMA learns one): per family, the mean over panel-origins of log(hidden MASE / backtest error) on each
 * series, less that series' mean over its families, averaged over the panel's series; in panels of 2-3 series and in
 * those of 4 or more apart, and within each between halves of the origins. A prior that transfers needs the same
 * families flattered in both halves.
 */
function optimism() {
  const studies = collectedStudies();
  if (studies.length < STUDY_ORIGINS.length) throw new Error(`optimism compares halves of the origins ${STUDY_ORIGINS.join(', ')}: collect a study at each first (BENCH_PANELS_ORIGIN=k ... collect)`);
  const flattery = (origins: readonly number[], small: boolean) => {
    const byFamily = new Map<string, number[]>();
    for (const { panels } of studies.filter((study) => origins.includes(study.k))) {
      for (const series of panels) {
        if (series.length < 2 || series.length < MIN_POOLED_SERIES !== small) continue;
        const perFamily = new Map<string, number[]>();
        for (const s of series) {
          const kept = s.candidates.filter((c) => usable(s, c.name) && c.error! > 0);
          const logs = kept.map((c) => Math.log(Math.max(maseOf(s, c.final!), 1e-12)) - Math.log(c.error!));
          const centre = mean(logs);
          kept.forEach((c, j) => perFamily.set(c.name, [...(perFamily.get(c.name) ?? []), logs[j]! - centre]));
        }
        for (const [name, xs] of perFamily) byFamily.set(name, [...(byFamily.get(name) ?? []), mean(xs)]);
      }
    }
    return new Map([...byFamily].map(([name, xs]) => [name, mean(xs)]));
  };
  const rankCorrelation = (a: Map<string, number>, b: Map<string, number>) => {
    const names = [...a.keys()].filter((name) => b.has(name));
    return jStat.spearmancoeff(names.map((name) => a.get(name)!), names.map((name) => b.get(name)!));
  };
  const [small, large] = [flattery(STUDY_ORIGINS, true), flattery(STUDY_ORIGINS, false)];
  console.log(`family                 2-${MIN_POOLED_SERIES - 1} series  ${MIN_POOLED_SERIES} or more (mean centred log of hidden MASE over backtest error)`);
  [...small.keys()]
    .filter((name) => large.has(name))
    .sort((x, y) => small.get(x)! - small.get(y)!)
    .forEach((name) => console.log(`${name.padEnd(22)} ${small.get(name)!.toFixed(3).padStart(8)}  ${large.get(name)!.toFixed(3).padStart(8)}`));
  console.log(`rank correlation of the families: 2-${MIN_POOLED_SERIES - 1} series against ${MIN_POOLED_SERIES} or more ${rankCorrelation(small, large).toFixed(2)}`);
  for (const [label, isSmall] of [[`2-${MIN_POOLED_SERIES - 1} series`, true], [`${MIN_POOLED_SERIES} or more`, false]] as const)
    console.log(
      `${label}, origins 0-1 against 2-3 ${rankCorrelation(flattery([0, 1], isSmall), flattery([2, 3], isSmall)).toFixed(2)}, 0 and 2 against 1 and 3 ${rankCorrelation(flattery([0, 2], isSmall), flattery([1, 3], isSmall)).toFixed(2)}`,
    );
}

/**
 * Two engines' choices compared offline: each checkout's study (`collect` at the origins 0-3 in each), the engine's
 * choice rebuilt from each, panel-origin by panel-origin, with panels-origins.ts's bar. An engine change that
 * alters the candidates (windows, families, fits) is estimated so in the minutes of two collections.
 */
function compareEngines(baseCheckout: string, expCheckout: string) {
  const pairs: [number, number][] = [];
  for (const k of STUDY_ORIGINS) {
    const [before, after] = [baseCheckout, expCheckout].map((dir) => studyFile(k, join(dir, 'bench', '.out')));
    if (!existsSync(before!) || !existsSync(after!)) continue;
    const [a, b] = [before!, after!].map((file) => JSON.parse(readFileSync(file, 'utf8')) as StudySeries[]);
    for (const id of [...new Set(b!.map((s) => s.panel))]) {
      const [sa, sb] = [a!, b!].map((all) => all.filter((s) => s.panel === id && s.scale > 0));
      if (sa!.length === 0 || sb!.length === 0) continue;
      const means: [number, number] = [mean(engineChoice(sa!)), mean(engineChoice(sb!))];
      pairs.push(means);
      if (moved(means)) console.log(`  origin ${k} ${id}: ${means[0].toFixed(3)} -> ${means[1].toFixed(3)}`);
    }
  }
  const bar = barOf(pairs);
  console.log(`${pairs.length} panel-origins compared: ${bar.changed} changed, ${bar.better} better, ${bar.worse} worse, geometric mean of the changed ${bar.geomean.toFixed(3)}: ${bar.verdict} offline`);
}

/** A refusal of the offline modes (an unknown rule, no study collected) as its one line rather than a stack trace. */
function inOneLine(run: () => void) {
  try {
    run();
  } catch (error) {
    console.error((error as Error).message);
    process.exitCode = 2;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [mode, only] = process.argv.slice(2);
  mkdirSync(OUT, { recursive: true });
  if (mode === 'collect') {
    const re = only ? new RegExp(only) : null;
    const stored: StudySeries[] = existsSync(FILE) ? (JSON.parse(readFileSync(FILE, 'utf8')) as StudySeries[]) : [];
    const sets: [Record<string, () => Panel>, boolean][] = [
      [PANELS, false],
      ...(process.env.BENCH_PANELS_EXTRA ? [[EXTRA_PANELS, true] as [Record<string, () => Panel>, boolean]] : []),
      ...(process.env.BENCH_PANELS_FRESH ? [[FRESH_PANELS, true] as [Record<string, () => Panel>, boolean]] : []),
    ];
    let kept = stored;
    for (const [set, extra] of sets) {
      for (const [id, make] of Object.entries(set)) {
        if (re && !re.test(id)) continue;
        const panel = atOrigin(make(), ORIGIN);
        if (!keepsEnoughAtOrigin(panel)) continue;
        const started = performance.now();
        const got = collectPanel(panel, extra);
        kept = [...kept.filter((s) => s.panel !== id), ...got];
        console.log(`${id}: ${got.length} series in ${((performance.now() - started) / 1000).toFixed(1)} s`);
        writeFileSync(FILE, JSON.stringify(kept));
      }
    }
  } else if (mode === 'choice') {
    inOneLine(() => choiceStudy(only));
  } else if (mode === 'compare') {
    const [base, exp] = process.argv.slice(3);
    inOneLine(() => {
      if (!base || !exp) throw new Error('usage: panels-study.ts compare BASE_CHECKOUT EXP_CHECKOUT');
      compareEngines(base, exp);
    });
  } else if (mode === 'hindsight') {
    inOneLine(hindsight);
  } else if (mode === 'optimism') {
    inOneLine(optimism);
  } else if (mode === 'parity') {
    parity(JSON.parse(readFileSync(FILE, 'utf8')) as StudySeries[]);
  } else {
    report(JSON.parse(readFileSync(FILE, 'utf8')) as StudySeries[]);
  }
}
