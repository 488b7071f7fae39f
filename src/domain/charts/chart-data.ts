import { detectDateFormat, parseDate, wholeDateFormat, withDateCache, type DatePart, type PartValues } from '../../training/index.js';

/**
 * What one chart panel draws, read from a job's rows: pure functions, no database, no rendering.
 * Time-series panels put every row on one time axis (or on row numbers when the dates cannot be read).
 */

export type Row = Record<string, string | null>;

export interface ColumnInfo {
  name: string;
  type: string;
  role: string;
  date_part?: string;
}

/** A known row of a panel. */
export interface HistoryPoint {
  x: number;
  value: number;
}

/** A forecast row with its interval bounds when stored. */
export interface ForecastPoint extends HistoryPoint {
  lo80?: number;
  hi80?: number;
  lo95?: number;
  hi95?: number;
  /** The last known point, repeated first so the forecast line and its bands start where history ends. */
  bridge?: true;
}

export interface SeriesPanel {
  kind: 'series';
  column: string;
  /** `time`: x is a UTC timestamp in ms; `row`: x is the row number (known rows, then forecast rows). */
  axis: 'time' | 'row';
  history: HistoryPoint[];
  forecast: ForecastPoint[];
  /** Where known rows end and forecast rows begin, on the x axis. */
  boundary: number | null;
  knownRows: number;
  shownRows: number;
  forecastRows: number;
  withIntervals: boolean;
}

export interface ClassCount {
  value: string;
  part: 'known' | 'predicted';
  count: number;
}

export interface ClassPanel {
  kind: 'classes';
  column: string;
  counts: ClassCount[];
  knownRows: number;
  shownRows: number;
  forecastRows: number;
  /** Classes beyond MAX_CLASSES, left out of the bars. */
  otherClasses: number;
}

export type PanelData = SeriesPanel | ClassPanel;

/** Bars beyond this many classes are unreadable: the most frequent are drawn. */
export const MAX_CLASSES = 30;

const cell = (row: Row, name: string) => (row[name] ?? '').trim();
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const numberOf = (text: string): number | undefined => (NUMBER.test(text) ? Number(text) : undefined);

/**
 * A timestamp per row from the job's date columns: a whole-date column (format detected as the engine
 * does, on the rows given: the drawn known rows and the forecast rows), or date parts including the year. Null when any row has no readable date: the panel then
 * counts rows instead, since a partial or invented calendar (parts without a year) would mislead.
 */
export function timeAxis(columns: ColumnInfo[], input: Row[], output: Row[]): { input: number[]; output: number[] } | null {
  // One parse per cell: the whole-date check and the timestamps read the same cells.
  return withDateCache(() => readTimeAxis(columns, input, output));
}

type WholeDates = { column: ColumnInfo; format: string | null } | undefined;

/** No date role: the first text input of whole dates is the time axis, as the engine reads it (wholeDateFormat). */
function textDateColumn(columns: ColumnInfo[], rows: Row[]): WholeDates {
  for (const column of columns) {
    if (column.role !== 'input') continue;
    const format = wholeDateFormat(rows.map((row) => cell(row, column.name)));
    if (format !== null) return { column, format };
  }
  return undefined;
}

function wholeDateColumn(dates: ColumnInfo[], rows: Row[]): WholeDates {
  const column = dates.find((c) => !c.date_part);
  return column && { column, format: detectDateFormat(rows.map((row) => cell(row, column.name))) };
}

function readTimeAxis(columns: ColumnInfo[], input: Row[], output: Row[]): { input: number[]; output: number[] } | null {
  const all = [...input, ...output];
  const dates = columns.filter((c) => c.role === 'date');
  const whole = dates.length === 0 ? textDateColumn(columns, all) : wholeDateColumn(dates, all);
  if (dates.length === 0 && !whole) return null;
  let times: (number | null)[];
  if (whole) {
    const { column, format } = whole;
    if (!format) return null;
    times = all.map((row) => parseDate(cell(row, column.name), format)?.toMillis() ?? null);
  } else {
    const parts = dates.map((c) => c.date_part as DatePart);
    if (!parts.includes('year')) return null;
    const values = all.map((row): PartValues | null => {
      const out: PartValues = {};
      for (const c of dates) {
        const n = numberOf(cell(row, c.name));
        if (n === undefined || !Number.isInteger(n)) return null;
        out[c.date_part as DatePart] = n;
      }
      return out;
    });
    // With the year present no part is invented, and Date.UTC is ~50x faster than luxon on long series.
    times = values.map((v) => (v === null ? null : Date.UTC(v.year!, (v.month ?? 1) - 1, v.day ?? 1, v.hour ?? 0, v.minute ?? 0)));
  }
  if (times.some((t) => t === null)) return null;
  return { input: times.slice(0, input.length) as number[], output: times.slice(input.length) as number[] };
}

/**
 * The last known rows of one output column, as the data layer cuts them (DataService.knownTail): in
 * upload order, each with its row number among all input rows, and how many rows are known in all.
 */
export interface KnownRows {
  rows: Row[];
  positions: number[];
  known: number;
}

/**
 * A numeric output column over time: the known rows read (the last `history` ones) and every forecast
 * row read with its 80%/95% bounds when stored. On row numbers, x is the row's number in the input and
 * forecast rows follow the last known row.
 */
export function seriesPanel(column: string, tail: KnownRows, output: Row[], axis: ReturnType<typeof timeAxis>): SeriesPanel {
  const history: HistoryPoint[] = [];
  tail.rows.forEach((row, i) => {
    const value = numberOf(cell(row, column));
    if (value !== undefined) history.push({ x: axis ? axis.input[i]! : tail.positions[i]!, value });
  });
  const lastKnownRow = tail.positions.at(-1) ?? 0;
  let withIntervals = false;
  const forecast: ForecastPoint[] = [];
  output.forEach((row, k) => {
    const value = numberOf(cell(row, column));
    if (value === undefined) return;
    const point: ForecastPoint = { x: axis ? axis.output[k]! : lastKnownRow + 1 + k, value };
    const bounds = (['lo80', 'hi80', 'lo95', 'hi95'] as const).map((bound) => numberOf(cell(row, `${column}_${bound}`)));
    if (bounds.every((b) => b !== undefined)) {
      [point.lo80, point.hi80, point.lo95, point.hi95] = bounds;
      withIntervals = true;
    }
    forecast.push(point);
  });
  const last = history.at(-1);
  const first = forecast[0];
  const forecastRows = forecast.length;
  if (last && first) {
    const at = last.value;
    forecast.unshift({ ...last, bridge: true, ...(withIntervals ? { lo80: at, hi80: at, lo95: at, hi95: at } : {}) });
  }
  const boundary = last && first ? (last.x + first.x) / 2 : (last?.x ?? null);
  return { kind: 'series', column, axis: axis ? 'time' : 'row', history, forecast, boundary, knownRows: tail.known, shownRows: history.length, forecastRows, withIntervals };
}

/** A categorical output: how often each class occurs in the known rows read (the last `history` ones) and in the predicted rows. */
export function classPanel(column: string, tail: KnownRows, output: Row[]): ClassPanel {
  const shown = tail.rows.map((row) => cell(row, column)).filter((v) => v !== '');
  const predicted = output.map((row) => cell(row, column)).filter((v) => v !== '');
  const tally = (values: string[]) => values.reduce((m, v) => m.set(v, (m.get(v) ?? 0) + 1), new Map<string, number>());
  const known = tally(shown);
  const guessed = tally(predicted);
  const classes = [...new Set([...known.keys(), ...guessed.keys()])].sort(
    (a, b) => (guessed.get(b) ?? 0) + (known.get(b) ?? 0) - (guessed.get(a) ?? 0) - (known.get(a) ?? 0) || a.localeCompare(b),
  );
  const drawn = classes.slice(0, MAX_CLASSES);
  const counts = drawn.flatMap((value): ClassCount[] => [
    { value, part: 'known', count: known.get(value) ?? 0 },
    { value, part: 'predicted', count: guessed.get(value) ?? 0 },
  ]);
  return { kind: 'classes', column, counts, knownRows: tail.known, shownRows: shown.length, forecastRows: predicted.length, otherClasses: classes.length - drawn.length };
}

/*
 * Uploads of many series: the key columns name a series; under each key the time axis repeats.
 * Series are told apart by their key values, cell text trimmed, compared exactly; `series=` of the chart
 * matches them case-insensitively.
 */

/** A series' key values, in the order of the report's key columns. */
export type SeriesKey = string[];

export const keyOf = (row: Row, keys: string[]): SeriesKey => keys.map((k) => cell(row, k));

/** How a series is named in titles and listings: its key values joined with " | ". */
export const seriesLabel = (key: SeriesKey) => key.join(' | ');

const keyId = (key: SeriesKey) => JSON.stringify(key);

const ESCAPED = /[\\,|]/g;

/** A key written as one `series=` item: values joined with `|`; a `\`, `,` or `|` inside a value is escaped with `\`. */
export const seriesParam = (key: SeriesKey) => key.map((v) => v.replace(ESCAPED, (c) => `\\${c}`)).join('|');

/**
 * The items of a `series=` value: series separated by commas, key values by `|` (backslash escapes
 * either, and itself), each value trimmed. Empty items (a trailing comma) are dropped.
 */
export function parseSeriesList(text: string): { key: SeriesKey; text: string }[] {
  const items: { key: SeriesKey; text: string }[] = [];
  let values: string[] = [];
  let value = '';
  let raw = '';
  const endItem = () => {
    values.push(value.trim());
    if (values.some((v) => v !== '')) items.push({ key: values, text: raw.trim() });
    values = [];
    value = '';
    raw = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      value += text[i + 1];
      raw += c + text[i + 1];
      i++;
    } else if (c === ',') endItem();
    else if (c === '|') {
      values.push(value.trim());
      value = '';
      raw += c;
    } else {
      value += c;
      raw += c;
    }
  }
  endItem();
  return items;
}

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/** Key order: value by value, numbers by their value ("2" before "10"), then case and accents apart. */
export function compareKeys(a: SeriesKey, b: SeriesKey): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const byValue = collator.compare(a[i] ?? '', b[i] ?? '') || (a[i] ?? '').localeCompare(b[i] ?? '');
    if (byValue !== 0) return byValue;
  }
  return 0;
}

/** Where one `series=` item matched: the series' positions in the order given, or the item not found. */
export type SeriesPick = { picked: number[]; unknown: string[] };

const RANGE = /^(\d+)\s*\.\.\s*(\d+)$/;

/**
 * The series `wanted` names among `all` (in the order the chart lists them), in the order asked, each once. An item is a key
 * (same number of values, each equal ignoring case; an exact match wins over one differing in case) or,
 * when no key is written so, a range `from..to` of 1-based positions in that order.
 */
export function pickSeries(all: SeriesKey[], wanted: { key: SeriesKey; text: string }[]): SeriesPick {
  const picked: number[] = [];
  const unknown: string[] = [];
  const lower = all.map((k) => k.map((v) => v.toLowerCase()));
  const add = (i: number) => {
    if (!picked.includes(i)) picked.push(i);
  };
  for (const item of wanted) {
    const exact = all.findIndex((k) => k.length === item.key.length && k.every((v, j) => v === item.key[j]));
    const folded = item.key.map((v) => v.toLowerCase());
    const loose = exact >= 0 ? exact : lower.findIndex((k) => k.length === folded.length && k.every((v, j) => v === folded[j]));
    if (loose >= 0) {
      add(loose);
      continue;
    }
    const range = item.key.length === 1 ? RANGE.exec(item.key[0]!) : null;
    const from = range ? Number(range[1]) : 0;
    const to = range ? Math.min(Number(range[2]), all.length) : 0;
    if (range && from >= 1 && from <= to) {
      for (let i = from - 1; i < to; i++) add(i);
      continue;
    }
    unknown.push(item.text);
  }
  return { picked, unknown };
}

/** One series' rows of a panel chart: its known rows read (KnownRows of its own), its output rows, and their time axis. */
export interface SeriesRows {
  key: SeriesKey;
  tail: KnownRows;
  output: Row[];
  axis: ReturnType<typeof timeAxis>;
}

/** One output column's rows of the series drawn, and how many of its known rows were read. */
export interface PanelColumn {
  column: ColumnInfo;
  series: SeriesRows[];
  known: number;
  read: number;
}

/**
 * The known rows read and the output rows split by series (in the order they first appear), each series keeping its last
 * `last` known rows. Timestamps are read once over every row (the date format is detected on them all),
 * then split with the rows; a series' own rows on the row-number axis keep their row numbers in the upload.
 */
export function splitSeries(keys: string[], columns: ColumnInfo[], tail: KnownRows, output: Row[], last: number): SeriesRows[] {
  const axis = timeAxis(columns, tail.rows, output);
  const series = new Map<string, SeriesRows>();
  const of = (row: Row) => {
    const key = keyOf(row, keys);
    const id = keyId(key);
    let found = series.get(id);
    if (!found) {
      found = { key, tail: { rows: [], positions: [], known: 0 }, output: [], axis: axis && { input: [], output: [] } };
      series.set(id, found);
    }
    return found;
  };
  tail.rows.forEach((row, i) => {
    const s = of(row);
    s.tail.rows.push(row);
    s.tail.positions.push(tail.positions[i]!);
    s.axis?.input.push(axis!.input[i]!);
  });
  output.forEach((row, k) => {
    const s = of(row);
    s.output.push(row);
    s.axis?.output.push(axis!.output[k]!);
  });
  const all = [...series.values()];
  for (const s of all) {
    s.tail.known = s.tail.rows.length;
    if (s.tail.rows.length > last) {
      const from = s.tail.rows.length - last;
      s.tail.rows = s.tail.rows.slice(from);
      s.tail.positions = s.tail.positions.slice(from);
      if (s.axis) s.axis.input = s.axis.input.slice(from);
    }
  }
  return all;
}
