/**
 * A panel's known drivers (the inputs filled in the rows to forecast), read for the models fitted across its series
 * (models/fixed-effects.ts, models/global.ts): each series' cells as planning keeps them, then the columns the series
 * share, aligned with the global model's series.
 */
import type { CellReader } from '../core/encoder.js';
import { isEmptyCell, parseNumber } from '../core/values.js';
import { hasUsableDrivers, type PanelDrivers } from '../models/fixed-effects.js';
import type { PreparedSeries } from '../series/series-run.js';

/**
 * A series' inputs, a row per known time and per time to forecast: numbers for a numeric input (null: empty or not a
 * number), trimmed text for a categorical one (null: empty).
 */
export interface SeriesDrivers {
  columns: string[];
  categorical: boolean[];
  known: (number | string | null)[][];
  future: (number | string | null)[][];
}

/** A prepared series' inputs as its drivers. */
export function sketchDrivers(prep: PreparedSeries): SeriesDrivers {
  const inputs = prep.analysis.columns.filter((c) => c.role === 'input');
  const columns = inputs.map((c) => c.name);
  const categorical = inputs.map((c) => c.kind === 'categorical');
  const at = columns.map((name) => prep.input.header.indexOf(name));
  const cellOf = (cell: string | null | undefined, k: number) => (categorical[k] ? (isEmptyCell(cell) ? null : String(cell).trim()) : parseNumber(cell ?? null));
  return carriedForward(
    {
      columns,
      categorical,
      known: prep.analysis.known.map((i) => columns.map((name, k) => cellOf((prep.analysis.readers[i] as CellReader)(name), k))),
      future: prep.placement.targets.map((t) => at.map((h, k) => cellOf(t.cells[h], k))),
    },
    prep.analysis.known.length,
  );
}

/**
 * A numeric driver's empty cells take its last value before them (its first where none comes before), the rule the
 * series' own features follow (core/features.ts), so the models across the series read what its families read. A
 * column with no number in the series stays empty (the series is then forecast without it).
 */
function carriedForward(drivers: SeriesDrivers, knownRows: number): SeriesDrivers {
  const rows = [...drivers.known, ...drivers.future];
  drivers.columns.forEach((_, k) => {
    if (drivers.categorical[k]) return;
    const first = rows.find((r) => r[k] !== null)?.[k] ?? null;
    let last = first;
    for (const row of rows) {
      if (row[k] === null) row[k] = last;
      else last = row[k] as number;
    }
  });
  return { ...drivers, known: rows.slice(0, knownRows), future: rows.slice(knownRows) };
}

/** Categories of one categorical input a panel's drivers name at most (the most frequent; the others read as the reference). */
const MAX_DRIVER_CATEGORIES = 20;

/**
 * The inputs the series share by name as the panel's known drivers, aligned with the global model's series: a numeric
 * input as its numbers, a categorical one as a 0/1 column per category but its most frequent (the reference every
 * other is measured against). Absent when the panel has none the fixed-effects regression can use.
 */
export function panelDrivers(sketches: SeriesDrivers[]): PanelDrivers | undefined {
  const sources = new Map<string, boolean>();
  for (const s of sketches) s.columns.forEach((c, k) => sources.set(c, sources.get(c) === true || s.categorical[k] === true));
  if (sources.size === 0) return undefined;
  const columns: string[] = [];
  /** The input each column reads (a categorical input gives a column per category). */
  const sourceOf: string[] = [];
  const readers: ((row: (number | string | null)[], at: number) => number | null)[] = [];
  for (const [source, categorical] of sources) {
    if (!categorical) {
      columns.push(source);
      sourceOf.push(source);
      readers.push((row, at) => (at < 0 ? null : typeof row[at] === 'number' ? (row[at]) : null));
      continue;
    }
    const counts = new Map<string, number>();
    for (const s of sketches) {
      const at = s.columns.indexOf(source);
      if (at >= 0) for (const row of s.known) if (typeof row[at] === 'string') counts.set(row[at], (counts.get(row[at]) ?? 0) + 1);
    }
    const ranked = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([name]) => name);
    for (const category of ranked.slice(1, MAX_DRIVER_CATEGORIES + 1)) {
      // Named with its reference, so an effect reads as the difference a category makes ("weather=snow against rain").
      columns.push(`${source}=${category} against ${ranked[0] as string}`);
      sourceOf.push(source);
      readers.push((row, at) => (at < 0 || row[at] === null || row[at] === undefined ? null : row[at] === category ? 1 : 0));
    }
  }
  const drivers: PanelDrivers = {
    columns,
    series: sketches.map((s) => {
      const at = sourceOf.map((source) => s.columns.indexOf(source));
      const pick = (row: (number | string | null)[]) => readers.map((read, j) => read(row, at[j] as number));
      return { known: s.known.map(pick), future: s.future.map(pick) };
    }),
  };
  return hasUsableDrivers(drivers) ? drivers : undefined;
}
