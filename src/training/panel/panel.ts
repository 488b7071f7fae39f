/**
 * Many series in one upload: a key column (store, station, state; or several, store x product)
 * under which the time axis repeats. Every tool users compare us with (StatsForecast's `unique_id`, fable's
 * tsibble keys) fits each series on its own; reading such an upload as one table lost to a per-series naive.
 *
 *  1. Keys: the columns the user stated as `key`, else the fewest input columns (text, or whole numbers)
 *     under which every series' stamps strictly increase while the upload's stamps repeat (detectKeys).
 *  2. Each series is read and placed on its own time axis (series.ts, engine.ts prepareSeries), with its own
 *     backtest windows; a series too short for that falls back (fallbackForecast) and says so.
 *  3. One global model across all series (global.ts, the M5 lesson), backtested on each series' own windows,
 *     competes in every series' selection and combinations next to the local families.
 *  4. Each series backtests its candidates; then, per output column, one structure is chosen across the
 *     series (panel-part.ts choosePanel) where there are enough of them, else each keeps its own winner.
 *  5. Each series refits its winner and forecasts; the rows come back in upload order with their keys.
 *
 * The per-series work (scoring, then refitting, of a group of series) is the unit that can move to another
 * thread or process.
 */
import { DateTime } from 'luxon';
import { WorkMeter, type FamilyChoice, type PreparedSeries, type SeriesPlan } from '../series/series-run.js';
import type { CellReader } from '../core/encoder.js';
import { timeOf, type SeriesState } from '../series/forecaster.js';
import { keyOf } from './panel-predict.js';
import { assemblePanel } from './panel-assembly.js';
import { panelDrivers, sketchDrivers, type SeriesDrivers } from './panel-drivers.js';
import {
  fallbackOutcome,
  globalResult,
  prepareMember,
  runGlobalTaskRound,
  choosePanel,
  fitPanelPart,
  scorePanelPart,
  seriesInput,
  type GlobalResult,
  type GlobalTask,
  type PanelPart,
  type PanelPlan,
  type PreparedMember,
  type SeriesOutcome,
  type SeriesScores,
} from './panel-part.js';
import { familiesFor } from '../models/candidates.js';
import type { GlobalRound, GlobalSeries } from '../models/global.js';
import type { ModelFamily, SeriesInfo } from '../models/model.js';
import type { EngineHooks } from '../core/progress.js';
import type { Analysis } from '../core/series.js';
import type { PanelReport, TrainingInput, TrainingResult } from '../core/types.js';
import { parseNumber } from '../core/values.js';

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
// 2.-5. Forecasting a panel

/**
 * Families a series of a panel tries: the cheap ones always (the naive family, ridge, Theta, ETS), the costly
 * ones (ARIMA, autoregressions, MSTL, harmonics) only in a panel of at most 20 series and 5,000 rows, since the
 * global model across series is what pays on many series and the time must stay that of a statistics package.
 * On 14 monthly industries (docs/benchmarks.md, panels) the costly ones took the mean MASE from 1.83 to 1.25
 * of the best naive in 4x the time; on 1,000 series they would take most of an hour. A series without a cycle
 * (no period with two cycles known: annual, decadal, short) tries the autoregressions in any panel: without
 * season dummies and a season's lags they are ridge fits on a few columns, as cheap as `linear` (214 countries'
 * annual population: 0.900 -> 0.811 mean MASE, 3.9 -> 4.2 s; SARIMA as well took 35 s for the same 0.811). With a
 * cycle they are not: 1,000 monthly series took 23.8 -> 37.2 s in one run for the same MASE (bench/forecast/panel-speed.ts).
 * The network never runs per series (seconds a fit). Each family says which it is (FamilyTraits panelCost).
 */
const COSTLY_MAX_SERIES = 20;
const COSTLY_MAX_ROWS = 5_000;

/**
 * Backtest windows per series by the panel's known rows: fewer windows on large panels keep the time bounded.
 * Windows that span a whole cycle (SeriesPlan.cycleWindows) only in the smallest tier: they cost a daily series of
 * h 28 about 5x its backtest, the cost the larger tiers' 2 and 1 windows are there to bound.
 */
const WINDOW_STEPS: { upToRows: number; windows: number; cycleWindows: boolean }[] = [
  { upToRows: 20_000, windows: 3, cycleWindows: true },
  { upToRows: 60_000, windows: 2, cycleWindows: false },
  { upToRows: Infinity, windows: 1, cycleWindows: false },
];

export function seriesPlan(series: number, totalRows: number): SeriesPlan {
  const costly = series <= COSTLY_MAX_SERIES && totalRows <= COSTLY_MAX_ROWS;
  const cheap = (f: ModelFamily, info: SeriesInfo) => f.traits?.panelCost === 'cheap' || (info.periods.length === 0 && f.traits?.panelCost === 'cheap_without_cycle');
  const choose: FamilyChoice = (kind, info) => familiesFor(kind).filter((f) => f.traits?.panelCost !== 'never' && (kind === 'categorical' || costly || cheap(f, info)));
  // A series of a panel combines no level family with others, tries a family with a test of its own (the level
  // families, the seasonal naives) only where the series passes it, and the value columns of a wide upload choose
  // together (selection.ts SelectionOptions).
  const selection = { levelsInCombinations: false, onlyWhereAdmitted: true, pooled: true };
  const { windows, cycleWindows } = WINDOW_STEPS.find((w) => totalRows <= w.upToRows) as (typeof WINDOW_STEPS)[number];
  return { choose, windows, cycleWindows, selection };
}

/** A series of the panel while planning: its key, its rows in the upload, and its preparation. */
interface PanelMember {
  index: number;
  key: string[];
  rows: number[];
  input: TrainingInput;
  /** What the global model and the parts need of the series once prepared (null: too short for a model). */
  sketch: SeriesSketch | null;
}

/**
 * A prepared series in brief: what the global model's rounds are built from and the work units of its fits.
 * Planning keeps this of each series rather than its preparation (every row's reader and features), so a panel
 * of 10,000 series is planned in the memory of a few.
 */
interface SeriesSketch {
  state: SeriesState;
  season: number;
  knownTimes: number[];
  /** Known values of each numeric output, in the series' output order. */
  outputs: { column: string; values: number[] }[];
  /** Its inputs' cells, a row per known time and per time to forecast (panel-drivers.ts). */
  drivers: SeriesDrivers;
  splits: { lastFit: number; test: number[] }[];
  targetTimes: number[];
  cost: number;
}

function sketchOf(prep: PreparedSeries): SeriesSketch {
  const outputs = prep.plan
    .filter(({ col }) => col.kind === 'numeric')
    .map(({ col }) => ({ column: col.name, values: prep.analysis.known.map((i) => parseNumber((prep.analysis.readers[i] as CellReader)(col.name)) as number) }));
  return {
    state: prep.placement.series,
    season: prep.placement.info.season,
    drivers: sketchDrivers(prep),
    knownTimes: prep.placement.knownTimes,
    outputs,
    splits: prep.backtest.splits.map((split) => ({ lastFit: split.fit[split.fit.length - 1] as number, test: split.test })),
    targetTimes: prep.placement.targets.map((t) => t.time),
    cost: prep.cost,
  };
}

/** The season position of time 0 of each series on one shared axis, so the global model's calendar agrees. */
function sharedOffsets(members: PanelMember[]): (number | null)[] {
  const states = members.map((m) => m.sketch?.state ?? null);
  const dated = states.filter((s): s is SeriesState => s !== null && s.timeOrdered && s.origin !== null);
  if (dated.length === 0) return states.map(() => null);
  const earliest = dated.reduce((a, b) => ((a.origin as string) <= (b.origin as string) ? a : b));
  return states.map((s) => {
    if (!s || !s.timeOrdered || s.origin === null || s.unit !== earliest.unit || s.step !== earliest.step) return null;
    return timeOf(earliest, DateTime.fromISO(s.origin, { zone: 'utc' }));
  });
}

/**
 * The global model's work across the panel, before any of it runs: its series (one per series and numeric
 * output, on one shared axis), one round per backtest window plus the final one, and which series of the panel
 * each of its series is. Series on another spacing than the panel's most common one, or with no time axis,
 * take no part. Null when fewer than two series could.
 */
function globalTask(members: PanelMember[], seed: number): GlobalTask | null {
  const offsets = sharedOffsets(members);
  const seasons = new Map<number, number>();
  members.forEach((m, k) => {
    if (m.sketch && offsets[k] !== null) seasons.set(m.sketch.season, (seasons.get(m.sketch.season) ?? 0) + 1);
  });
  const season = [...seasons.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (season === undefined) return null;
  const entries: { member: PanelMember; sketch: SeriesSketch; column: string; values: number[]; offset: number }[] = [];
  members.forEach((m, k) => {
    const offset = offsets[k];
    if (!m.sketch || offset === null || offset === undefined || m.sketch.season !== season) return;
    for (const { column, values } of m.sketch.outputs) entries.push({ member: m, sketch: m.sketch, column, values, offset });
  });
  if (entries.length < 2) return null;
  const series: GlobalSeries[] = entries.map(({ sketch, values, offset }) => ({ time: sketch.knownTimes.map((t) => t + offset), values }));
  const drivers = panelDrivers(entries.map((e) => e.sketch.drivers));
  const windows = entries.reduce((m, e) => Math.max(m, e.sketch.splits.length), 0);
  const rounds: GlobalRound[] = [];
  for (let r = 0; r <= windows; r++) {
    const final = r === windows;
    const cut: (number | null)[] = [];
    const predict: number[][] = [];
    entries.forEach(({ sketch, offset }) => {
      const times = sketch.knownTimes;
      if (final) {
        cut.push((times[times.length - 1] as number) + offset);
        predict.push(sketch.targetTimes.map((t) => t + offset));
        return;
      }
      const split = sketch.splits[sketch.splits.length - windows + r];
      if (!split) {
        cut.push(null);
        predict.push([]);
        return;
      }
      cut.push((times[split.lastFit] as number) + offset);
      predict.push(split.test.map((i) => (times[i] as number) + offset));
    });
    rounds.push({ cut, predict });
  }
  return { series, rounds, season, seed, entries: entries.map((e) => ({ index: e.member.index, column: e.column })), ...(drivers ? { drivers } : {}) };
}

/** Work units of one round of the global model, on the local families' scale (a naive fit is 1). */
const roundCost = (task: GlobalTask) => (4 * Math.max(1, task.series.reduce((s, x) => s + x.values.length, 0) / 200)) / task.rounds.length;

/** A row cap never cuts a series below this many of its most recent known rows. */
const MIN_ROWS_PER_SERIES = 24;

/** Known rows each of `series` series keeps under a row cap of `cap` (the reader cuts by the same rule, training-set.ts). */
export const rowsPerSeries = (cap: number, series: number) => Math.max(MIN_ROWS_PER_SERIES, Math.floor(cap / series));
/**
 * Work units a part aims at (the local families' scale, a naive fit is 1): about two seconds of one training
 * thread on this project's 2-core machine (1,000 monthly series: 31,000 units in 14 s), so another user's job
 * waits at most that long for a thread, and a part lost with its worker costs that much again.
 */
export const PART_COST = 5_000;
/** Series per part at most, however cheap: a part's rows and outcomes stay a few megabytes. */
const MAX_PART_SERIES = 250;

/** A panel planned: the shared part written once, the parts with their work units, and the series prepared here. */
export interface PlannedPanel {
  plan: PanelPlan;
  /** The global model's rounds, each a unit of work that runs before the parts (null: no global model). */
  global: { task: GlobalTask; roundCost: number } | null;
  parts: { part: PanelPart; cost: number }[];
  seriesPlan: SeriesPlan;
  /** Series prepared while planning, kept (keepPrepared) for a run that goes on in the same thread. */
  prepared: Map<number, PreparedMember>;
}

/**
 * Everything a panel does once for all its series: the row cap per series, each series read and prepared
 * (those too short for a model decided at once), the global model's rounds laid out (they run as units of
 * their own, before the parts: runGlobalRound); then the series cut into parts of about PART_COST work units,
 * in upload order.
 */
export function planPanel(
  input: TrainingInput,
  grouping: Grouping,
  seed: number,
  options: { partUnits?: number; keepPrepared?: boolean; onPrepared?: (done: number, total: number) => void } = {},
): PlannedPanel {
  const partUnits = options.partUnits ?? PART_COST;
  const prepared = new Map<number, PreparedMember>();
  const outcomes: SeriesOutcome[] = [];
  const started = performance.now();
  const totalRows = grouping.groups.reduce((s, g) => s + g.rows.length, 0);
  const seriesPlanned = seriesPlan(grouping.groups.length, totalRows);
  const cap = input.params.maxKnownRows;
  const perSeries = cap !== undefined && totalRows > cap ? rowsPerSeries(cap, grouping.groups.length) : undefined;
  const params = perSeries === undefined ? input.params : { ...input.params, maxKnownRows: perSeries };
  const members: PanelMember[] = grouping.groups.map((g, index) => {
    const sub = seriesInput(input.header, input.columns, params, grouping.keys, g.rows.map((i) => input.rows[i] as (string | null)[]));
    const member = prepareMember(sub, seed, seriesPlanned);
    // A series run elsewhere is prepared again there: only its sketch stays here.
    if (options.keepPrepared) prepared.set(index, member);
    if (!member.prep) outcomes.push(fallbackOutcome(index, sub, member.knownRows, member.note));
    options.onPrepared?.(index + 1, grouping.groups.length);
    return { index, key: g.key, rows: g.rows, input: sub, sketch: member.prep ? sketchOf(member.prep) : null };
  });
  const readMs = performance.now() - started;
  const global = globalTask(members, seed);
  const entryOf = new Map<number, Record<string, number>>();
  global?.entries.forEach((e, s) => {
    let byColumn = entryOf.get(e.index);
    if (!byColumn) entryOf.set(e.index, (byColumn = {}));
    byColumn[e.column] = s;
  });

  const parts: PlannedPanel['parts'] = [];
  let current: { part: PanelPart; cost: number } | undefined;
  for (const m of members) {
    if (!m.sketch) continue;
    if (!current || current.cost >= partUnits || current.part.members.length >= MAX_PART_SERIES) {
      current = {
        part: { header: input.header, columns: input.columns, params, seed, keys: grouping.keys, panel: { series: members.length, rows: totalRows }, globalRounds: global?.rounds.length ?? 0, globalSeason: global?.season ?? 1, ...(global?.drivers ? { globalDrivers: global.drivers.columns } : {}), members: [] },
        cost: 0,
      };
      parts.push(current);
    }
    const entries = entryOf.get(m.index);
    current.part.members.push({ index: m.index, rows: m.input.rows, ...(entries ? { global: entries } : {}) });
    current.cost += m.sketch.cost;
  }
  const notes = perSeries === undefined ? [] : [`each series cut to its most recent ${perSeries} known rows (the row cap of ${cap} over ${members.length} series)`];
  return {
    plan: { header: input.header, keys: grouping.keys, keySource: grouping.source, params: input.params, seed, members: members.map((m) => ({ key: m.key, rows: m.rows })), notes, outcomes, readMs },
    global: global ? { task: global, roundCost: roundCost(global) } : null,
    parts,
    seriesPlan: seriesPlanned,
    prepared,
  };
}

/**
 * A planned panel finished on this thread, through the steps of a job in parts (job-parts.ts) on one progress
 * bar: the global model's rounds, every part's series scored, the choice across the series, every part refitted,
 * put together. Each part's scores pass through JSON as a stored answer does, so the output is the same rows
 * however the job ran.
 */
export function runPlannedPanel(planned: PlannedPanel, hooks: EngineHooks, started: number): TrainingResult {
  const rounds = planned.global?.task.rounds.length ?? 0;
  const meter = new WorkMeter(rounds * (planned.global?.roundCost ?? 0) + planned.parts.reduce((s, p) => s + p.cost, 0), hooks);
  const globalStarted = performance.now();
  const global = planned.global ? runGlobalRounds(planned.global.task, meter, planned.global.roundCost) : null;
  const clock = { backtestMs: performance.now() - globalStarted, fitMs: 0 };
  const options = { prepared: planned.prepared, clock };
  const scores = planned.parts.map(({ part }) => JSON.parse(JSON.stringify(scorePanelPart(part, planned.seriesPlan, meter, { ...options, global }))) as SeriesScores[]);
  const choice = choosePanel(scores.flat(), planned.seriesPlan.selection ?? {});
  const outcomes = planned.parts.flatMap(({ part }, k) => fitPanelPart(part, scores[k] as SeriesScores[], choice, planned.seriesPlan, meter, options));
  meter.finish();
  return assemblePanel(planned.plan, outcomes, { trainMs: performance.now() - started, phases: { readMs: planned.plan.readMs, backtestMs: clock.backtestMs, fitMs: clock.fitMs } });
}

/** Every round of the models across the panel's series in turn, then each one's description. */
function runGlobalRounds(task: GlobalTask, meter: WorkMeter, cost: number): GlobalResult {
  const runs = task.rounds.map((_, r) => runGlobalTaskRound(task, r, meter.claim(cost)));
  return globalResult(task.season, runs, task.drivers?.columns);
}
