/**
 * Many series in one upload (issue 33): a key column (store, station, state; or several, store x product)
 * under which the time axis repeats. Every tool users compare us with (StatsForecast's `unique_id`, fable's
 * tsibble keys) fits each series on its own; reading such an upload as one table lost to a per-series naive.
 *
 *  1. Keys: the columns the user stated as `key`, else the fewest input columns (text, or whole numbers)
 *     under which every series' stamps strictly increase while the upload's stamps repeat (detectKeys).
 *  2. Each series is read and placed on its own time axis (series.ts, engine.ts prepareSeries), with its own
 *     backtest windows; a series too short for that falls back (fallbackForecast) and says so.
 *  3. One global model across all series (global.ts, the M5 lesson), backtested on each series' own windows,
 *     competes in every series' selection and combinations next to the local families.
 *  4. Each series picks its winner, refits and forecasts; the rows come back in upload order with their keys.
 *
 * The per-series work (scoreSeries + finishSeries of one PreparedSeries) is the unit that can move to
 * another thread or process (issue 34).
 */
import { DateTime } from 'luxon';
import { finishSeries, prepareSeries, scoreSeries, WorkMeter, type FamilyChoice, type OutputRun, type PreparedSeries, type SeriesPlan } from './series-run.js';
import type { CellReader } from './encoder.js';
import { timeOf, type EngineState, type SeriesState } from './forecaster.js';
import { keyOf, type PanelSeriesState, type PanelState } from './panel-predict.js';
import { backtestError, type Scored } from './selection.js';
import { familiesFor } from './models/candidates.js';
import { precomputedGlobalFamily } from './models/global-forecast.js';
import { runGlobalModel, type GlobalRound, type GlobalSeries } from './models/global.js';
import type { ModelFamily } from './models/model.js';
import { NAIVE_NAMES } from './models/naive.js';
import type { EngineHooks } from './progress.js';
import { analyse, MIN_KNOWN_ROWS, type Analysis } from './series.js';
import {
  TrainingError,
  type ColumnSpec,
  type OutputSelection,
  type PanelReport,
  type PanelSeriesReport,
  type TrainedModelV2,
  type TrainingInput,
  type TrainingResult,
} from './types.js';
import { isEmptyCell, parseNumber } from './values.js';

/** Candidate key columns tried in pairs when no single one names the series (the fewest distinct values first). */
const MAX_PAIR_CANDIDATES = 6;

// ---------------------------------------------------------------------------------------------------------
// 1. Keys

interface Grouping {
  keys: string[];
  source: PanelReport['keySource'];
  /** Row indices of each series, in upload order; series in order of first appearance. */
  groups: { key: string[]; rows: number[] }[];
}

const cellText = (read: CellReader, column: string) => (read(column) ?? '').trim();

function groupRows(analysis: Analysis, keys: string[], rowCount: number): Grouping['groups'] {
  const byKey = new Map<string, { key: string[]; rows: number[] }>();
  for (let i = 0; i < rowCount; i++) {
    const read = analysis.readers[i] as CellReader;
    const key = keys.map((k) => cellText(read, k));
    const id = keyOf(key);
    let group = byKey.get(id);
    if (!group) byKey.set(id, (group = { key, rows: [] }));
    group.rows.push(i);
  }
  return [...byKey.values()];
}

/** Every series' stamps increase (strictly, or never going back when `repeats`), rows without a stamp aside. */
function orderedWithin(groups: Grouping['groups'], millis: (number | null)[], repeats = false): boolean {
  for (const { rows } of groups) {
    let last = -Infinity;
    for (const i of rows) {
      const m = millis[i];
      if (m === null || m === undefined) continue;
      if (m < last || (m === last && !repeats)) return false;
      last = m;
    }
  }
  return true;
}

/** A column that could name series: text, or whole numbers, with fewer distinct values than half the rows. */
function keyCandidates(analysis: Analysis, rowCount: number): { name: string; distinct: number }[] {
  const found: { name: string; distinct: number }[] = [];
  for (const c of analysis.columns) {
    if (c.role !== 'input') continue;
    const values = new Set<string>();
    let wholeNumbers = true;
    for (let i = 0; i < rowCount; i++) {
      const cell = cellText(analysis.readers[i] as CellReader, c.name);
      values.add(cell);
      if (wholeNumbers && cell !== '' && !/^-?\d+$/.test(cell)) wholeNumbers = false;
      if (values.size > rowCount / 2) break;
    }
    if (c.kind === 'numeric' && !wholeNumbers) continue;
    if (values.size < 2 || values.size > rowCount / 2) continue;
    found.push({ name: c.name, distinct: values.size });
  }
  return found.sort((a, b) => a.distinct - b.distinct);
}

export function detectKeys(input: TrainingInput, analysis: Analysis): Grouping | null {
  const rowCount = input.rows.length;
  const stated = analysis.columns.filter((c) => c.role === 'key').map((c) => c.name);
  if (stated.length > 0) return { keys: stated, source: 'stated', groups: groupRows(analysis, stated, rowCount) };
  if (analysis.timeAxis.source === 'none') return null;
  const millis = analysis.timeline.map((d) => d?.toMillis() ?? null);
  const whole = [{ key: [], rows: millis.map((_, i) => i) }];
  // One series (stamps already increase) is not a panel, whatever its text inputs.
  if (orderedWithin(whole, millis)) return null;
  const candidates = keyCandidates(analysis, rowCount);
  const tries: string[][] = candidates.map((c) => [c.name]);
  const pairable = candidates.slice(0, MAX_PAIR_CANDIDATES);
  for (let a = 0; a < pairable.length; a++) {
    for (let b = a + 1; b < pairable.length; b++) tries.push([(pairable[a] as { name: string }).name, (pairable[b] as { name: string }).name]);
  }
  const grouped = tries.map((keys) => ({ keys, groups: groupRows(analysis, keys, rowCount) })).filter((g) => g.groups.length >= 2);
  // Stamps that repeat but never go back are one series logged twice (series.ts keeps the last row of each);
  // only where they go back may a key with repeats inside its series be taken (they are reported per series).
  const found =
    grouped.find((g) => orderedWithin(g.groups, millis)) ??
    (orderedWithin(whole, millis, true) ? undefined : grouped.find((g) => orderedWithin(g.groups, millis, true)));
  if (!found) return null;
  // Keys in upload order, as the user reads them.
  const ordered = input.header.filter((h) => found.keys.includes(h));
  return { keys: ordered, source: 'detected', groups: ordered.join() === found.keys.join() ? found.groups : groupRows(analysis, ordered, rowCount) };
}

// ---------------------------------------------------------------------------------------------------------
// 2.-4. Forecasting a panel

/**
 * Families a series of a panel tries: the cheap ones always (the naive family, ridge, Theta, ETS), the costly
 * ones (ARIMA, autoregressions, MSTL, harmonics) only in a panel of at most 20 series and 5,000 rows, since the
 * global model across series is what pays on many series and the time must stay that of a statistics package.
 * On 14 monthly industries (docs/benchmarks.md, panels) the costly ones took the mean MASE from 1.83 to 1.25
 * of the best naive in 4x the time; on 1,000 series they would take most of an hour. The network never runs
 * per series (seconds a fit).
 */
const CHEAP = new Set([...NAIVE_NAMES, 'linear', 'theta', 'ets']);
const COSTLY_MAX_SERIES = 20;
const COSTLY_MAX_ROWS = 5_000;
const NEVER_IN_PANELS = new Set(['network']);

/** Backtest windows per series by the panel's known rows: fewer windows on large panels keep the time bounded. */
const WINDOW_STEPS: { upToRows: number; windows: number }[] = [
  { upToRows: 20_000, windows: 3 },
  { upToRows: 60_000, windows: 2 },
  { upToRows: Infinity, windows: 1 },
];

export function seriesPlan(series: number, totalRows: number): SeriesPlan {
  const costly = series <= COSTLY_MAX_SERIES && totalRows <= COSTLY_MAX_ROWS;
  const choose: FamilyChoice = (kind) => familiesFor(kind).filter((f) => !NEVER_IN_PANELS.has(f.name) && (kind === 'categorical' || costly || CHEAP.has(f.name)));
  return { choose, windows: (WINDOW_STEPS.find((w) => totalRows <= w.upToRows) as { windows: number }).windows };
}

/** A series of the panel: its rows, and either its prepared run or why it has none. */
interface PanelMember {
  key: string[];
  rows: number[];
  input: TrainingInput;
  prep: PreparedSeries | null;
  note?: string;
  knownRows: number;
}

function seriesInput(input: TrainingInput, keys: string[], rows: number[]): TrainingInput {
  const columns: ColumnSpec[] = input.columns.map((c) => (keys.includes(c.name) ? { ...c, role: 'ignore' } : c));
  return { header: input.header, columns, rows: rows.map((i) => input.rows[i] as (string | null)[]), params: input.params };
}

function member(input: TrainingInput, keys: string[], group: { key: string[]; rows: number[] }, seed: number, plan: SeriesPlan): PanelMember {
  const sub = seriesInput(input, keys, group.rows);
  let analysis: Analysis;
  try {
    analysis = analyse(sub);
  } catch (error) {
    if (!(error instanceof TrainingError) || error.code !== 'invalid_input') throw error;
    const outputs = sub.columns.filter((c) => c.role === 'output');
    const knownRows = sub.rows.filter((row) => outputs.some((c) => !isEmptyCell(row[sub.header.indexOf(c.name)]))).length;
    return { key: group.key, rows: group.rows, input: sub, prep: null, knownRows, note: knownRows === 0 ? 'no known value: not forecast' : `too short for a model (${knownRows} known rows, ${MIN_KNOWN_ROWS} needed): its last known value carried forward` };
  }
  try {
    return { key: group.key, rows: group.rows, input: sub, prep: prepareSeries(sub, analysis, seed, plan), knownRows: analysis.known.length };
  } catch (error) {
    if (!(error instanceof TrainingError) || error.code !== 'invalid_input') throw error;
    return { key: group.key, rows: group.rows, input: sub, prep: null, knownRows: analysis.known.length, note: `too short for a model (${error.message}): its last known value carried forward` };
  }
}

/** The season position of time 0 of each series on one shared axis, so the global model's calendar agrees. */
function sharedOffsets(members: PanelMember[]): (number | null)[] {
  const states = members.map((m) => m.prep?.placement.series ?? null);
  const dated = states.filter((s): s is SeriesState => s !== null && s.timeOrdered && s.origin !== null);
  if (dated.length === 0) return states.map(() => null);
  const earliest = dated.reduce((a, b) => ((a.origin as string) <= (b.origin as string) ? a : b));
  return states.map((s) => {
    if (!s || !s.timeOrdered || s.origin === null || s.unit !== earliest.unit || s.step !== earliest.step) return null;
    return timeOf(earliest, DateTime.fromISO(s.origin, { zone: 'utc' }));
  });
}

/**
 * The global model's candidate per series and output: scored on the series' own backtest windows. Series on
 * another spacing than the panel's most common one, or with no time axis, get none.
 */
function globalCandidates(members: PanelMember[], seed: number, meter: WorkMeter): Map<PanelMember, Map<string, Scored>> {
  const found = new Map<PanelMember, Map<string, Scored>>();
  const offsets = sharedOffsets(members);
  const seasons = new Map<number, number>();
  members.forEach((m, k) => {
    if (m.prep && offsets[k] !== null) seasons.set(m.prep.placement.info.season, (seasons.get(m.prep.placement.info.season) ?? 0) + 1);
  });
  const season = [...seasons.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (season === undefined) return found;
  const entries: { member: PanelMember; column: string; offset: number }[] = [];
  members.forEach((m, k) => {
    const offset = offsets[k];
    if (!m.prep || offset === null || offset === undefined || m.prep.placement.info.season !== season) return;
    for (const { col } of m.prep.plan) if (col.kind === 'numeric') entries.push({ member: m, column: col.name, offset });
  });
  if (entries.length < 2) return found;
  const series: GlobalSeries[] = entries.map(({ member: m, column, offset }) => {
    const prep = m.prep as PreparedSeries;
    const col = prep.plan.find((p) => p.col.name === column)?.col as ColumnSpec;
    const values = prep.analysis.known.map((i) => parseNumber((prep.analysis.readers[i] as CellReader)(col.name)) as number);
    return { time: prep.placement.knownTimes.map((t) => t + offset), values };
  });
  const windows = entries.reduce((m, e) => Math.max(m, (e.member.prep as PreparedSeries).backtest.splits.length), 0);
  const rounds: GlobalRound[] = [];
  for (let r = 0; r <= windows; r++) {
    const final = r === windows;
    const cut: (number | null)[] = [];
    const predict: number[][] = [];
    entries.forEach(({ member: m, offset }) => {
      const prep = m.prep as PreparedSeries;
      const times = prep.placement.knownTimes;
      if (final) {
        cut.push((times[times.length - 1] as number) + offset);
        predict.push(prep.placement.targets.map((t) => t.time + offset));
        return;
      }
      const splits = prep.backtest.splits;
      const split = splits[splits.length - windows + r];
      if (!split) {
        cut.push(null);
        predict.push([]);
        return;
      }
      cut.push((times[split.fit[split.fit.length - 1] as number] as number) + offset);
      predict.push(split.test.map((i) => (times[i] as number) + offset));
    });
    rounds.push({ cut, predict });
  }
  const progress = meter.claim(globalCost(series));
  const run = runGlobalModel(series, rounds, { season, seed, progress });
  if (!run) return found;
  entries.forEach((entry, s) => {
    const prep = entry.member.prep as PreparedSeries;
    const splits = prep.backtest.splits;
    const predictions = splits.map((_, k) => (run.predictions[windows - splits.length + k] as number[][])[s] as number[]);
    if (predictions.some((p, k) => p.length !== (splits[k] as { test: number[] }).test.length || p.some((v) => !Number.isFinite(v)))) return;
    const futureTimes = prep.placement.targets.map((t) => t.time);
    const values = (run.predictions[windows] as number[][])[s] as number[];
    if (values.length !== futureTimes.length || values.some((v) => !Number.isFinite(v))) return;
    const family = precomputedGlobalFamily({ first: futureTimes[0] ?? prep.placement.series.lastTime + 1, values: stepValues(futureTimes, values), description: run.description });
    const actual = prep.analysis.known.map((i) => parseNumber((prep.analysis.readers[i] as CellReader)(entry.column)) as number);
    const scored: Scored = { family, predictions, error: backtestError(prep.backtest, actual, predictions), description: run.description };
    let byColumn = found.get(entry.member);
    if (!byColumn) found.set(entry.member, (byColumn = new Map<string, Scored>()));
    byColumn.set(entry.column, scored);
  });
  return found;
}

/** Forecasts at possibly uneven future times as one value per step from the first (gaps take the previous value). */
function stepValues(times: number[], values: number[]): number[] {
  if (times.length === 0) return values;
  const first = times[0] as number;
  const out: number[] = [];
  times.forEach((t, k) => {
    const at = Math.round(t - first);
    while (out.length < at) out.push(out.length > 0 ? (out[out.length - 1] as number) : (values[k] as number));
    out[at] = values[k] as number;
  });
  return out;
}

/** Work units of the global model, on the local families' scale (a naive fit is 1). */
const globalCost = (series: GlobalSeries[]) => 4 * Math.max(1, series.reduce((s, x) => s + x.values.length, 0) / 200);

/** A series with no model: its rows to forecast take its last known value (empty with no known value). */
function fallbackForecast(m: PanelMember): { forecasts: TrainingResult['forecasts']; carried: Record<string, string> } {
  const outputs = m.input.columns.filter((c) => c.role === 'output');
  const index = new Map(m.input.header.map((h, i) => [h, i]));
  const carried: Record<string, string> = {};
  for (const c of outputs) {
    const i = index.get(c.name) as number;
    for (let r = m.input.rows.length - 1; r >= 0; r--) {
      const cell = (m.input.rows[r] as (string | null)[])[i];
      if (!isEmptyCell(cell)) {
        carried[c.name] = String(cell).trim();
        break;
      }
    }
  }
  const forecasts: TrainingResult['forecasts'] = [];
  m.input.rows.forEach((row, r) => {
    if (!outputs.every((c) => isEmptyCell(row[index.get(c.name) as number]))) return;
    const values: Record<string, string> = {};
    m.input.header.forEach((h, i) => (values[h] = row[i] ?? ''));
    for (const c of outputs) values[c.name] = carried[c.name] ?? '';
    forecasts.push({ rowIndex: r, values });
  });
  return { forecasts, carried };
}

/** MAE of the one-step naive on the known rows: the scale of a series' errors (MASE's denominator). */
function naiveScale(run: OutputRun): number {
  const y = run.data.target as number[];
  let sum = 0;
  for (let i = 1; i < y.length; i++) sum += Math.abs((y[i] as number) - (y[i - 1] as number));
  const scale = y.length > 1 ? sum / (y.length - 1) : 0;
  return scale > 0 ? scale : 1;
}

/** A row cap never cuts a series below this many of its most recent known rows. */
const MIN_ROWS_PER_SERIES = 24;
/** Series listed one by one in the report; the counts cover all of them. */
const MAX_LISTED_SERIES = 1_000;

export function forecastPanel(input: TrainingInput, grouping: Grouping, hooks: EngineHooks, seed: number): TrainingResult {
  const started = performance.now();
  const totalRows = grouping.groups.reduce((s, g) => s + g.rows.length, 0);
  const plan = seriesPlan(grouping.groups.length, totalRows);
  const cap = input.params.maxKnownRows;
  const perSeries = cap !== undefined && totalRows > cap ? Math.max(MIN_ROWS_PER_SERIES, Math.floor(cap / grouping.groups.length)) : undefined;
  const capped = perSeries === undefined ? input : { ...input, params: { ...input.params, maxKnownRows: perSeries } };
  const members = grouping.groups.map((g) => member(capped, grouping.keys, g, seed, plan));
  const modelled = members.filter((m) => m.prep !== null);
  const readMs = performance.now() - started;

  const localCost = modelled.reduce((s, m) => s + (m.prep as PreparedSeries).cost, 0);
  const meter = new WorkMeter(localCost + 4 * Math.max(1, totalRows / 200), hooks);
  const global = globalCandidates(members, seed, meter);
  const runs = new Map<PanelMember, OutputRun[]>();
  for (const m of modelled) {
    const extra = global.get(m);
    runs.set(m, scoreSeries(m.prep as PreparedSeries, meter, (column) => (extra?.get(column) ? [extra.get(column) as Scored] : [])));
  }
  const backtestMs = performance.now() - started - readMs;

  const results = new Map<PanelMember, TrainingResult>();
  for (const m of modelled) results.set(m, finishSeries(m.prep as PreparedSeries, runs.get(m) as OutputRun[], meter, started));
  const fitMs = performance.now() - started - readMs - backtestMs;
  meter.finish();
  const notes = perSeries === undefined ? [] : [`each series cut to its most recent ${perSeries} known rows (the row cap of ${cap} over ${members.length} series)`];
  return assemble(input, grouping, members, runs, results, { readMs, backtestMs, fitMs }, seed, performance.now() - started, notes);
}

function assemble(
  input: TrainingInput,
  grouping: Grouping,
  members: PanelMember[],
  runs: Map<PanelMember, OutputRun[]>,
  results: Map<PanelMember, TrainingResult>,
  phases: { readMs: number; backtestMs: number; fitMs: number },
  seed: number,
  trainMs: number,
  notes: string[],
): TrainingResult {
  // Rows in upload order; a series' generated future rows right after its last uploaded row.
  const placed: { order: number; row: TrainingResult['forecasts'][number] }[] = [];
  const seriesStates: PanelSeriesState[] = [];
  const perSeries: PanelSeriesReport[] = [];
  const wins: Record<string, number> = {};
  const inputColumns = new Set<string>(grouping.keys);
  const outputs = new Set<string>();
  for (const m of members) {
    const result = results.get(m);
    const last = m.rows[m.rows.length - 1] as number;
    const fallback = result ? null : fallbackForecast(m);
    const forecasts = result ? result.forecasts : (fallback as ReturnType<typeof fallbackForecast>).forecasts;
    forecasts.forEach((f, j) => {
      const rowIndex = f.rowIndex === null ? null : (m.rows[f.rowIndex] as number);
      placed.push({ order: rowIndex ?? last + (j + 1) / (forecasts.length + 1), row: { ...f, rowIndex } });
    });
    if (result) {
      const engine = (result.model as TrainedModelV2).engine as EngineState;
      seriesStates.push({ key: m.key, engine });
      engine.inputColumns.forEach((c) => inputColumns.add(c));
      engine.outputs.forEach((o) => outputs.add(o.column));
      const selection = result.selection?.outputs ?? [];
      for (const o of selection) wins[o.chosen] = (wins[o.chosen] ?? 0) + 1;
      const timeNotes = result.selection?.timeNotes ?? [];
      perSeries.push({
        key: m.key,
        rows: m.knownRows,
        outputs: selection.map((o) => ({ column: o.column, chosen: o.chosen, error: o.error, baseline: o.baseline })),
        ...(timeNotes.length > 0 ? { note: timeNotes.join('; ') } : {}),
      });
    } else {
      seriesStates.push({ key: m.key, engine: null, carried: (fallback as ReturnType<typeof fallbackForecast>).carried });
      m.input.columns.filter((c) => c.role === 'output').forEach((c) => outputs.add(c.name));
      perSeries.push({ key: m.key, rows: m.knownRows, outputs: [], ...(m.note ? { note: m.note } : {}) });
    }
  }
  placed.sort((a, b) => a.order - b.order);

  const modelled = members.filter((m) => results.has(m));
  const first = modelled.length > 0 ? (results.get(modelled[0] as PanelMember) as TrainingResult) : undefined;
  const lengths = members.map((m) => m.knownRows);
  const panel: PanelReport = {
    keys: grouping.keys,
    keySource: grouping.source,
    series: members.length,
    shortest: lengths.reduce((a, b) => Math.min(a, b), Infinity),
    longest: lengths.reduce((a, b) => Math.max(a, b), 0),
    wins,
    perSeries: perSeries.slice(0, MAX_LISTED_SERIES),
  };
  const state: PanelState = { version: 1, kind: 'panel', keys: grouping.keys, inputColumns: [...inputColumns], outputs: [...outputs], series: seriesStates };
  const params = { ...input.params, seed };
  const all = modelled.map((m) => results.get(m) as TrainingResult);
  const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  const validationRows = all.reduce((s, r) => s + r.metrics.validationRows, 0);
  const mapes = all.map((r) => r.metrics.mape).filter((m): m is number => m !== null);
  const frequencies = new Map<string, number>();
  for (const r of all) frequencies.set(r.selection?.frequency ?? 'none', (frequencies.get(r.selection?.frequency ?? 'none') ?? 0) + 1);
  const frequency = [...frequencies.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'none';
  const typical = all.find((r) => r.selection?.frequency === frequency) ?? first;
  // Every series too short for a model: each carried forward, and the report says why per series.
  const noRuns = modelled.length === 0 ? [`none of the ${members.length} series has ${MIN_KNOWN_ROWS} known rows: each carries its last known value forward`] : [];
  return {
    model: JSON.parse(JSON.stringify({ version: 2, params, engine: state })) as TrainedModelV2,
    forecasts: placed.map((p) => p.row),
    selection: {
      modelFamily: 'auto',
      scheme: typical?.selection?.scheme ?? 'rolling-origin',
      windows: all.reduce((m, r) => Math.max(m, r.selection?.windows ?? 0), 0),
      horizon: all.reduce((m, r) => Math.max(m, r.selection?.horizon ?? 0), 0),
      frequency,
      season: typical?.selection?.season ?? 1,
      periods: typical?.selection?.periods ?? [],
      ...(notes.length + noRuns.length > 0 ? { timeNotes: [...notes, ...noRuns] } : {}),
      outputs: summaryOutputs(modelled, runs),
      panel,
    },
    metrics: {
      mae: mean(all.map((r) => r.metrics.mae)),
      rmse: mean(all.map((r) => r.metrics.rmse)),
      mape: mapes.length > 0 ? mean(mapes) : null,
      baselineMae: mean(all.map((r) => r.metrics.baselineMae)),
      baselineRmse: mean(all.map((r) => r.metrics.baselineRmse)),
      validationRows,
      trainingRows: all.reduce((s, r) => s + r.metrics.trainingRows, 0),
    },
    successRate: validationRows === 0 ? 0 : Math.round(all.reduce((s, r) => s + r.successRate * r.metrics.validationRows, 0) / validationRows),
    figures: { ...(first?.figures ?? { neurons: 0, inputs: 0, layersRequested: 0, layersCreated: 0 }), outputs: outputs.size },
    timing: { trainMs, samples: all.reduce((s, r) => s + r.timing.samples, 0), epochs: 0, samplesEpochsPerSecond: 0, phases },
  };
}

/**
 * Per output column, the panel's table: each candidate's mean scaled error (MASE: backtest MAE over the series'
 * one-step naive MAE) over the series it scored on, the winners' mean, and the best naive family's. Categorical
 * outputs: mean error rates.
 */
function summaryOutputs(modelled: PanelMember[], runs: Map<PanelMember, OutputRun[]>): OutputSelection[] {
  const columns = new Map<string, { kind: 'numeric' | 'categorical'; entries: { run: OutputRun; scale: number }[] }>();
  for (const m of modelled) {
    for (const run of runs.get(m) ?? []) {
      let entry = columns.get(run.column);
      if (!entry) columns.set(run.column, (entry = { kind: run.kind, entries: [] }));
      entry.entries.push({ run, scale: run.kind === 'numeric' ? naiveScale(run) : 1 });
    }
  }
  return [...columns.entries()].map(([column, { kind, entries }]) => {
    const byFamily = new Map<string, { family: ModelFamily; sum: number; count: number; notes: Set<string> }>();
    let winners = 0;
    const chosen = new Map<string, number>();
    for (const { run, scale } of entries) {
      winners += run.winner.error / scale;
      const name = run.winner.members.length > 1 ? 'combination' : (run.winner.members[0] as { family: ModelFamily }).family.name;
      chosen.set(name, (chosen.get(name) ?? 0) + 1);
      for (const s of run.scored) {
        let f = byFamily.get(s.family.name);
        if (!f) byFamily.set(s.family.name, (f = { family: s.family, sum: 0, count: 0, notes: new Set() }));
        if (s.error !== null) {
          f.sum += s.error / scale;
          f.count++;
        } else if (s.note) f.notes.add(s.note);
      }
    }
    const candidates = [...byFamily.values()].map((f) => ({
      name: f.family.name,
      description: f.count > 0 ? `${f.family.name} on ${f.count} of ${entries.length} series` : f.family.name,
      error: f.count > 0 ? f.sum / f.count : null,
      ...(f.count < entries.length && f.notes.size > 0 ? { note: [...f.notes][0] } : {}),
    }));
    const naive = candidates.filter((c) => NAIVE_NAMES.has(c.name) && c.error !== null).sort((a, b) => (a.error as number) - (b.error as number))[0];
    const ranking = [...chosen.entries()].sort((a, b) => b[1] - a[1]);
    const error = winners / entries.length;
    return {
      column,
      kind,
      metric: kind === 'numeric' ? ('MASE' as const) : ('error rate' as const),
      chosen: (ranking[0] as [string, number])[0],
      description: `per series over ${entries.length} series: ${ranking.map(([name, count]) => `${name} ${count}`).join(', ')}`,
      error,
      baseline: { name: naive?.name ?? 'none', error: naive?.error ?? error },
      candidates,
    };
  });
}
