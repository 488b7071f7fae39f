/**
 * The training set as the training thread reads it: the runner streams the job's input rows
 * from the database into a spool file (COPY text format, `ord` first) and hands the thread its path; the
 * thread parses it into compact columns (Float64Array per numeric column, dictionary codes for the others)
 * while it reads, keeps only the rows a model will see, checks the job against its memory budget, and only
 * then materialises those rows as the engine's string cells.
 *
 * Row cap, applied while reading so memory stays bounded whatever the upload's size:
 *  - rows to forecast (every output cell empty) are always kept;
 *  - known rows: `DataRowsToConsider` (params.dataRowsToConsider) keeps the most recent N; past
 *    TRAINING_MAX_ROWS (limits.maxRows), or past the rows whose training fits TRAINING_MEMORY_MB at this
 *    width (rowsThatFit), a series (it has a date column) keeps its most recent rows and tabular data a
 *    seeded uniform sample (reservoir sampling, seed = params.seed or SAMPLE_SEED), in upload order. Known rows that cannot be valid for the engine (series.ts isValidKnownRow: an empty
 *    output, a numeric output cell or date part that does not parse) are not counted and, once the cap binds,
 *    not kept: the engine would skip them anyway.
 * When nothing is capped the engine gets every row exactly as stored, so its results do not move.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { PART_ORDER } from '../core/dates.js';
import { readPart } from '../core/encoder.js';
import { rowsPerSeries } from '../panel/panel.js';
import { mulberry32 } from '../core/prng.js';
import { TrainingError, type ColumnSpec, type DatePart, type TrainingInput, type TrainingParams } from '../core/types.js';
import { isEmptyCell, parseNumber } from '../core/values.js';
import { RowStore, type Column } from './row-store.js';

/** What the runner hands the training thread instead of the rows. */
export interface TrainingSpool {
  /** COPY text format: one line per row, `ord` then the header's cells, tab-separated, `\N` = null. */
  path: string;
  header: string[];
  columns: ColumnSpec[];
  /**
   * Columns whose kind the database has not detected yet (their spec's kind is a placeholder): this thread
   * detects it while reading, by the database's rule (data.repository.ts detectNumeric: every non-empty
   * cell reads as a number and one is not empty), instead of a full-table scan on the API's thread.
   */
  detect?: string[];
}

export interface TrainingLimits {
  /** Known rows a model sees at most when DataRowsToConsider does not say fewer (TRAINING_MAX_ROWS). */
  maxRows: number;
  /** One training's memory budget in MB (TRAINING_MEMORY_MB); the thread's heap limit is the same. */
  budgetMb: number;
  /** Work units of one part of a panel (TRAINING_PART_UNITS; default panel.ts PART_COST). */
  partUnits?: number;
}

/** How the set was cut; the runner writes it into the run's status record. */
export interface TrainingSetReport {
  /** Rows in the upload. */
  rows: number;
  /** Known rows kept for the engine, and how they were chosen. */
  known: number;
  forecast: number;
  cap: { rows: number; rule: 'none' | 'DataRowsToConsider' | 'most recent' | 'most recent per series' | 'seeded sample' };
  /** The memory estimate the budget was checked against. */
  estimateMb: number;
  budgetMb: number;
  /** The kinds detected for `spool.detect`, for the runner to store. */
  kinds: Record<string, 'numeric' | 'categorical'>;
}

/** Reservoir seed when the run has none (params.seed), so the same upload always trains on the same sample. */
export const SAMPLE_SEED = 0x5eed;
const MB = 1024 * 1024;

/**
 * The engine's heap for one run: a fixed base plus so much per row and per cell, fitted on the thread's
 * peak (committed heap + buffers) training numeric uploads of 2,000 to 200,000 rows (docs/benchmarks.md,
 * "Training memory"; 200,000 rows x 5 columns peaked at 993 MB). Used to cut the rows to what fits the
 * budget and to refuse a job before it starts, instead of letting it reach the heap limit.
 */
export const ENGINE_BASE_MB = 110;
export const ENGINE_BYTES_PER_ROW = 1000;
export const ENGINE_BYTES_PER_CELL = 700;
/** Never cut below this many known rows to fit the budget: a set needing that is refused instead. */
const MIN_FIT_ROWS = 1000;

export function engineEstimateMb(rows: number, width: number): number {
  return ENGINE_BASE_MB + (rows * (ENGINE_BYTES_PER_ROW + width * ENGINE_BYTES_PER_CELL)) / MB;
}

/** Known rows of `width` columns whose training fits `budgetMb` (half the room left for the rest). */
export function rowsThatFit(budgetMb: number, width: number): number {
  const room = Math.max(0, budgetMb - ENGINE_BASE_MB) * MB;
  return Math.max(MIN_FIT_ROWS, Math.floor(room / (ENGINE_BYTES_PER_ROW + width * ENGINE_BYTES_PER_CELL) / 1.25));
}

// ---------------------------------------------------------------------------------------------------------
// The spool file

const ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** One cell of COPY's text format. */
export function decodeCell(text: string): string | null {
  if (text === '\\N') return null;
  if (!text.includes('\\')) return text;
  return text.replace(/\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|([\s\S]))/g, (_, octal?: string, hex?: string, char?: string) =>
    octal ? String.fromCharCode(parseInt(octal, 8)) : hex ? String.fromCharCode(parseInt(hex, 16)) : (ESCAPES[char as string] ?? (char as string)),
  );
}

/** Lines of the spool file, read in 1 MB chunks. */
async function* spoolLines(path: string): AsyncGenerator<{ line: string; bytesRead: number }> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let bytesRead = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: MB })) {
    bytesRead += (chunk as Buffer).length;
    const text = rest + decoder.write(chunk as Buffer);
    let start = 0;
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      yield { line: text.slice(start, end), bytesRead };
      start = end + 1;
    }
    rest = text.slice(start);
  }
  rest += decoder.end();
  if (rest !== '') yield { line: rest, bytesRead };
}

// ---------------------------------------------------------------------------------------------------------
// Reading

/** The database's numeric cell (data.repository.ts NUMBER_PATTERN). */
const NUMERIC_CELL = /^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*$/;

/**
 * The rule a known row must pass to count towards the cap: series.ts isValidKnownRow, less the date
 * format, and less the number check for columns whose kind is still being detected (an input's cell with no
 * number never costs its row: the engine carries the column's last value into it).
 */
function knownRowCheck(header: string[], columns: ColumnSpec[], detect: Set<string>) {
  const at = (name: string) => header.indexOf(name);
  const used = columns.filter((c) => c.role !== 'ignore' && at(c.name) >= 0);
  const known = (c: ColumnSpec) => c.kind === 'numeric' && !detect.has(c.name);
  const outputs = used.filter((c) => c.role === 'output').map((c) => ({ i: at(c.name), numeric: known(c) }));
  const parts = used.filter((c) => c.role === 'date' && c.datePart).map((c) => at(c.name));
  const dates = used.filter((c) => c.role === 'date' && !c.datePart).map((c) => at(c.name));
  return {
    isForecast: (cells: (string | null)[]) => outputs.every((o) => isEmptyCell(cells[o.i])),
    mayBeValid: (cells: (string | null)[]) =>
      outputs.every((o) => !isEmptyCell(cells[o.i]) && (!o.numeric || parseNumber(cells[o.i]) !== null)) &&
      parts.every((i) => readPart(cells[i]) !== null) &&
      dates.every((i) => !isEmptyCell(cells[i])),
    isSeries: parts.length + dates.length > 0,
    hasWholeDates: dates.length > 0,
    isInput: (i: number) => used.some((c) => c.role === 'input' && at(c.name) === i),
    /** Date-part columns, coarsest first, to compare stamps row by row. */
    partsByRank: used
      .filter((c) => c.role === 'date' && c.datePart)
      .sort((a, b) => PART_ORDER.indexOf(a.datePart as DatePart) - PART_ORDER.indexOf(b.datePart as DatePart))
      .map((c) => at(c.name)),
  };
}

/** A stamp (date parts, coarsest first) earlier than the one before it. */
function goesBack(stamp: number[], last: number[]): boolean {
  for (let k = 0; k < stamp.length; k++) {
    if ((stamp[k] as number) !== (last[k] as number)) return (stamp[k] as number) < (last[k] as number);
  }
  return false;
}

const tooLarge = (needMb: number, budgetMb: number, why: string) =>
  new TrainingError('too_large', `This training needs about ${Math.ceil(needMb)} MB, budget ${budgetMb} MB (${why}); set DataRowsToConsider lower or upload fewer rows`);

/**
 * The columns that name a series where the reader can tell them: the stated key, else the one text input (a
 * detected key of one text column, the common long upload). Empty when it cannot: the engine then finds the
 * key and cuts each series itself, after reading every row.
 */
function seriesKey(header: string[], columns: ColumnSpec[]): number[] {
  const stated = columns.filter((c) => c.role === 'key');
  const texts = columns.filter((c) => c.role === 'input' && c.kind === 'categorical');
  const named = stated.length > 0 ? stated : texts.length === 1 ? texts : [];
  return named.map((c) => header.indexOf(c.name));
}

/**
 * Each series' most recent max(24, cap / series) known rows, in upload order. Null (no cut) unless every series'
 * date parts never go back in upload order, so its last rows are its most recent.
 */
function recentPerSeries(known: RowStore, numeric: boolean[], keyColumns: number[], parts: number[], cap: number): { store: RowStore; perSeries: number } | null {
  const order = known.order();
  const seriesOf = (slot: number) => keyColumns.map((c) => (known.columns[c] as Column).get(slot) ?? '').join('\u0001');
  const counts = new Map<string, number>();
  const last = new Map<string, number[]>();
  for (const slot of order) {
    const series = seriesOf(slot);
    counts.set(series, (counts.get(series) ?? 0) + 1);
    const stamp = parts.map((c) => readPart((known.columns[c] as Column).get(slot)) ?? NaN);
    if (!stamp.every(Number.isFinite)) return null;
    const before = last.get(series);
    if (before && goesBack(stamp, before)) return null;
    last.set(series, stamp);
  }
  const perSeries = rowsPerSeries(cap, counts.size);
  const keep = new Array<boolean>(order.length).fill(false);
  const taken = new Map<string, number>();
  for (let k = order.length - 1; k >= 0; k--) {
    const series = seriesOf(order[k] as number);
    const n = taken.get(series) ?? 0;
    if (n < perSeries) keep[k] = true;
    taken.set(series, n + 1);
  }
  const store = new RowStore(numeric);
  order.forEach((slot, k) => {
    if (keep[k]) store.append(known.rowIndex[slot] as number, known.cells(slot));
  });
  return { store, perSeries };
}

/**
 * Reads the spool into compact columns, cuts it to the rows a model sees and materialises those rows for
 * the engine. Throws TrainingError('too_large') when the job would not fit its memory budget.
 */
export async function loadTrainingSet(
  spool: TrainingSpool,
  params: TrainingParams,
  limits: TrainingLimits,
  /** The share of the spool file read so far (0-1), at each chunk of it. */
  onRead?: (share: number) => void,
): Promise<{ input: TrainingInput; report: TrainingSetReport }> {
  const { header } = spool;
  const width = header.length;
  const detect = new Set(spool.detect ?? []);
  const specs = new Map(spool.columns.map((c) => [c.name, c]));
  // Columns to detect start as numbers and turn to dictionary codes at their first non-numeric cell.
  const numeric = header.map((name) => detect.has(name) || specs.get(name)?.kind === 'numeric');
  const detecting = header.map((name, c) => (detect.has(name) && header.indexOf(name) === c ? { c, numeric: true, filled: false } : null)).filter((d) => d !== null);
  const check = knownRowCheck(header, spool.columns, detect);
  const asked = params.dataRowsToConsider !== undefined && params.dataRowsToConsider > 0 ? Math.floor(params.dataRowsToConsider) : Infinity;
  const ceiling = Math.min(limits.maxRows, rowsThatFit(limits.budgetMb, width));
  // An upload of many series: cut here, in upload order, it would lose whole series, so the engine
  // cuts each series to its most recent rows instead (params.maxKnownRows). Known as one by a stated key, by
  // date parts that go back (the next series starts), or by a text input beside a whole-date column (a key
  // whose dates cannot be compared before their format is known); found before the cap binds, as a panel
  // sorted by key shows it at the end of its first series.
  let keyed = check.isSeries && (spool.columns.some((c) => c.role === 'key') || (check.hasWholeDates && spool.columns.some((c) => c.role === 'input' && c.kind === 'categorical' && !detect.has(c.name))));
  let capRows = keyed ? Infinity : Math.min(asked, ceiling);
  const rule: TrainingSetReport['cap']['rule'] = asked <= ceiling ? 'DataRowsToConsider' : check.isSeries ? 'most recent' : 'seeded sample';
  const sampling = rule === 'seeded sample';
  const random = mulberry32(params.seed !== undefined && Number.isFinite(params.seed) ? Math.trunc(params.seed) >>> 0 : SAMPLE_SEED);

  let known = new RowStore(numeric, capRows);
  const forecast = new RowStore(numeric);
  // Known rows the engine will skip: kept only while nothing is capped, so an uncapped set reaches the
  // engine exactly as stored.
  let skipped: RowStore | null = new RowStore(numeric);
  const fileBytes = (await stat(spool.path)).size;
  const budgetBytes = limits.budgetMb * MB;

  let rows = 0;
  let seen = 0;
  let lastOrd = -Infinity;
  let lastStamp: number[] | null = null;
  const becomeKeyed = () => {
    if (keyed || !check.isSeries || seen > capRows) return;
    keyed = true;
    capRows = Infinity;
    known.capacity = Infinity;
  };
  let chunkEnd = 0;
  for await (const { line, bytesRead } of spoolLines(spool.path)) {
    if (onRead && bytesRead !== chunkEnd) onRead(bytesRead / Math.max(1, fileBytes));
    chunkEnd = bytesRead;
    const fields = line.split('\t');
    const ord = Number(fields[0]);
    if (!(ord > lastOrd)) throw new Error(`The training spool is not in upload order at row ${rows + 1}`);
    lastOrd = ord;
    const cells = new Array<string | null>(width);
    for (let c = 0; c < width; c++) cells[c] = fields[c + 1] === undefined ? null : decodeCell(fields[c + 1] as string);
    const row = rows++;
    for (const d of detecting) {
      const cell = cells[d.c];
      if (cell === null || cell === undefined || cell === '') continue;
      d.filled = true;
      if (d.numeric && !NUMERIC_CELL.test(cell)) {
        d.numeric = false;
        for (const store of [known, forecast, skipped]) store?.toCodes(d.c);
        if (check.hasWholeDates && check.isInput(d.c)) becomeKeyed();
      }
    }
    if (!keyed && check.partsByRank.length > 0) {
      const stamp = check.partsByRank.map((i) => readPart(cells[i]) ?? NaN);
      if (lastStamp && stamp.every(Number.isFinite) && goesBack(stamp, lastStamp)) becomeKeyed();
      if (stamp.every(Number.isFinite)) lastStamp = stamp;
    }
    if (check.isForecast(cells)) forecast.append(row, cells);
    else if (!check.mayBeValid(cells)) skipped?.append(row, cells);
    else {
      const k = seen++;
      if (k < capRows) known.put(k, row, cells);
      else if (!sampling) known.put(k % capRows, row, cells);
      else {
        const j = Math.floor(random() * (k + 1));
        if (j < capRows) known.put(j, row, cells);
      }
      if (k === capRows) {
        skipped?.clear();
        skipped = null;
      }
    }
    if ((row & 0x3fff) === 0 && row > 0) {
      const held = known.bytes() + forecast.bytes() + (skipped?.bytes() ?? 0);
      if (held > budgetBytes) throw tooLarge((held * fileBytes) / Math.max(1, bytesRead) / MB, limits.budgetMb, `the upload's rows take ${Math.round(held / MB)} MB in memory after ${row} rows`);
    }
  }

  const kinds: TrainingSetReport['kinds'] = {};
  for (const d of detecting) kinds[header[d.c] as string] = d.numeric && d.filled ? 'numeric' : 'categorical';
  const columns = spool.columns.map((c) => (kinds[c.name] ? { ...c, kind: kinds[c.name] as ColumnSpec['kind'] } : c));
  // Many series past the row cap: each cut here to the rows the engine would keep of it (panel.ts), so a panel
  // of 10,000 series reaches the engine as 240,000 rows, not 1,200,000.
  let perSeries = 0;
  const seriesColumns = keyed && known.size > ceiling && check.partsByRank.length > 0 ? seriesKey(header, columns) : [];
  const cut = seriesColumns.length > 0 ? recentPerSeries(known, numeric, seriesColumns, check.partsByRank, ceiling) : null;
  if (cut) ({ store: known, perSeries } = cut);
  const kept = known.size + forecast.size + (skipped?.size ?? 0);
  const heldMb = (known.bytes() + forecast.bytes() + (skipped?.bytes() ?? 0)) / MB;
  const estimateMb = heldMb + engineEstimateMb(keyed ? Math.min(kept, ceiling) : kept, width);
  const report: TrainingSetReport = {
    rows,
    known: known.size,
    forecast: forecast.size,
    cap: perSeries > 0 ? { rows: perSeries, rule: 'most recent per series' } : { rows: capRows === Infinity ? 0 : capRows, rule: seen > capRows ? rule : 'none' },
    estimateMb: Math.round(estimateMb),
    budgetMb: limits.budgetMb,
    kinds,
  };
  if (estimateMb > limits.budgetMb) {
    throw tooLarge(estimateMb, limits.budgetMb, `${kept} rows of ${width} columns reach the models`);
  }

  // Materialise the kept rows in upload order: a three-way merge of the stores by upload row.
  const stores = [known, forecast, ...(skipped ? [skipped] : [])];
  const orders = stores.map((s) => s.order());
  const heads = stores.map(() => 0);
  const materialised: (string | null)[][] = [];
  for (;;) {
    let best = -1;
    let bestRow = Infinity;
    stores.forEach((s, i) => {
      const slot = orders[i]![heads[i]!];
      if (slot !== undefined && (s.rowIndex[slot] as number) < bestRow) {
        best = i;
        bestRow = s.rowIndex[slot] as number;
      }
    });
    if (best < 0) break;
    materialised.push(stores[best]!.cells(orders[best]![heads[best]!++]!));
  }
  const engineParams = keyed && (ceiling < known.size || perSeries > 0) ? { ...params, maxKnownRows: ceiling } : params;
  return { input: { header, columns, rows: materialised, params: engineParams }, report };
}
