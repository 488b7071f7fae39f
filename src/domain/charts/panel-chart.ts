import type { TopLevelSpec } from 'vega-lite';
import type { PanelReport } from '../../training/index.js';
import { Errors } from '../errors.js';
import {
  classPanel,
  compareKeys,
  keyOf,
  parseSeriesList,
  pickSeries,
  seriesLabel,
  seriesPanel,
  seriesParam,
  splitSeries,
  type ColumnInfo,
  type KnownRows,
  type PanelColumn,
  type Row,
  type SeriesKey,
} from './chart-data.js';
import { MAX_PIXELS, MAX_SERIES_PANELS, type ChartQuery, type Drawing } from './chart-query.js';
import { classSpec, gridSpec, headerSpec, seriesSpec } from './chart-spec.js';
import { panelHeader, rowsText, seriesFigures } from './chart-titles.js';
import type { Placement } from './render.js';

/**
 * The most input rows a chart of many series reads from the upload's head (every column): beyond, the
 * series drawn are read as the last known rows, like any chart. A 500-series monthly panel's last 57,000
 * known rows took 4 s on PGlite; its first 12 series, 1,500 rows from the head, a small part of that.
 */
const HEAD_READ_MAX_ROWS = 20_000;

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

export interface PanelBuild {
  q: ChartQuery;
  panel: PanelReport;
  columns: ColumnInfo[];
  output: Row[];
  share: number;
  readCut: { outputRows?: number };
  timeColumns: ColumnInfo[];
  tabular: boolean;
  kindOf: (column: ColumnInfo) => 'numeric' | 'categorical';
  tailOf: (column: ColumnInfo, last: number, extra?: string[]) => Promise<KnownRows & { rows: Row[] }>;
  /** The upload's first `limit` rows, every column. */
  readInput: (limit: number) => Promise<Row[]>;
  outputRows: number;
}

/**
 * Many series: one small panel per series (and output column), in the upload's order of series (the
 * selection report's), the first MAX_SERIES_PANELS unless `series=` names others; a header says how many
 * there are and how to ask. Each series keeps its last `history` known rows.
 */
export async function buildPanel(b: PanelBuild): Promise<Drawing> {
  const { q, panel, columns, output } = b;
  const keys = panel.keys;
  const id = (key: SeriesKey) => JSON.stringify(key);
  const reported = new Map(panel.perSeries.map((s) => [id(s.key.map((v) => v.trim())), s]));
  // The report's series, then any only the output names (in key order): positions count in this order.
  const found = new Map<string, SeriesKey>();
  for (const key of panel.perSeries.map((s) => s.key.map((v) => v.trim()))) found.set(id(key), key);
  const unreported = [...new Map(output.map((row) => [id(keyOf(row, keys)), keyOf(row, keys)])).entries()].filter(([k]) => !found.has(k));
  for (const [k, key] of unreported.sort(([, x], [, y]) => compareKeys(x, y))) found.set(k, key);
  const all = [...found.values()];
  const total = all.length;

  let picked: number[];
  if (q.series !== undefined) {
    const asked = pickSeries(all, parseSeriesList(q.series));
    if (asked.unknown.length > 0) {
      // Examples unquoted, as a usable series= value: quotes around them would read as one long quoted part to the error path's cut.
      const examples = all.slice(0, 3).map(seriesParam).join(',');
      const what = asked.unknown.map((t) => `'${t}'`).join(', ');
      throw Errors.invalidParameter(
        'series',
        `${what} ${asked.unknown.length === 1 ? 'is not a series' : 'are not series'} of job ${q.jobId}: its ${total} series are keyed by ${keys.join(' | ')}, e.g. series=${examples} ` +
          `(several separated by commas${keys.length > 1 ? ', key values joined with |' : ''}, or positions in upload order such as 1..${Math.min(total, MAX_SERIES_PANELS)})`,
      );
    }
    if (asked.picked.length === 0) throw Errors.invalidParameter('series', 'names no series');
    if (asked.picked.length > MAX_SERIES_PANELS) {
      throw Errors.invalidParameter('series', `names ${asked.picked.length} series; a chart draws at most ${MAX_SERIES_PANELS}: ask for the rest in another chart`);
    }
    picked = asked.picked;
  } else {
    picked = all.slice(0, MAX_SERIES_PANELS).map((_, i) => i);
  }

  const perColumn = await readSeries(b, all, picked);

  // Grid: one row per series when there are a few columns, else as many panels across as fit 300 px each.
  const cells = picked.length * columns.length;
  const across = Math.min(cells, columns.length > 1 && columns.length <= 4 ? columns.length : Math.max(1, Math.min(4, Math.floor(q.width / 300))));
  const cellWidth = Math.floor(q.width / across);
  const rows = Math.ceil(cells / across);
  const header = headerSpec(panelHeader(b, all, picked, perColumn), q.width, columns.every((c) => b.kindOf(c) === 'categorical') ? 'classes' : 'series');
  const height = header.height + rows * q.height;
  if (q.width * height > MAX_PIXELS) {
    throw Errors.invalidParameter(
      'height',
      `${cells} panels of ${cellWidth} x ${q.height} and their header (${q.width} x ${height} in all) exceed ${MAX_PIXELS / 1e6} million pixels; ask for fewer series or a smaller size`,
    );
  }

  const specs: TopLevelSpec[] = [];
  const at: Placement[] = [];
  for (const index of picked) {
    const key = all[index]!;
    const report = reported.get(id(key));
    for (const { column, series } of perColumn) {
      const rows = series.find((s) => id(s.key) === id(key)) ?? { key, tail: { rows: [], positions: [], known: 0 }, output: [], axis: null };
      const cell = specs.length;
      const width = cell % across === across - 1 ? q.width - cellWidth * (across - 1) : cellWidth;
      const size = { width, height: q.height };
      const chosen = report?.outputs.find((o) => o.column === column.name);
      // A series' own errors are in its units (MAE) or an error rate; MASE is only the report's summary over series.
      const metric = b.kindOf(column) === 'categorical' ? 'error rate' : 'MAE';
      const name = `${seriesLabel(key)}${columns.length > 1 ? ` · ${column.name}` : ''}`;
      const figures = seriesFigures(metric, chosen, report?.note);
      if (b.kindOf(column) === 'categorical') {
        const drawn = classPanel(column.name, rows.tail, rows.output);
        specs.push(classSpec(drawn, { text: `${name}: ${chosen?.chosen ?? 'no model'}`, subtitle: [...figures, rowsText(drawn.shownRows, drawn.knownRows, drawn.forecastRows)] }, size, { small: true }));
      } else {
        const drawn = seriesPanel(column.name, rows.tail, rows.output, b.tabular ? null : rows.axis);
        specs.push(seriesSpec(drawn, { text: `${name}: ${chosen?.chosen ?? 'no model'}`, subtitle: [...figures, rowsText(drawn.shownRows, drawn.knownRows, drawn.forecastRows)] }, size, b.tabular ? 'points' : 'line', { small: true }));
      }
      at.push({ x: (cell % across) * cellWidth, y: header.height + Math.floor(cell / across) * q.height });
    }
  }
  return {
    panels: [header.spec, ...specs],
    size: { width: q.width, height },
    at: [{ x: 0, y: 0 }, ...at],
    spec: gridSpec(panelHeader(b, all, picked, perColumn), specs, across, q.width),
  };
}

/**
 * The known rows of the series drawn, per column. A long upload is sorted by key, so the first series
 * are the upload's first rows: when the series drawn are among the first and their rows (as the report
 * counts them) are few, they are read from the head, only as far as they go. Otherwise, or when the
 * head shows the series interleaved or cut, the last known rows of the upload within the chart's budget.
 */
async function readSeries(b: PanelBuild, all: SeriesKey[], picked: number[]): Promise<PanelColumn[]> {
  const { q, panel, columns, output } = b;
  const keys = panel.keys;
  const last = q.history > 0 ? q.history : b.share;
  const head = await headRows(b, all, picked);
  const perColumn: PanelColumn[] = [];
  for (const column of columns) {
    let tail: KnownRows;
    if (head) {
      const numeric = b.kindOf(column) !== 'categorical';
      const rows: Row[] = [];
      const positions: number[] = [];
      head.forEach((row, i) => {
        const value = (row[column.name] ?? '').trim();
        if (numeric ? NUMBER.test(value) : value !== '') {
          rows.push(row);
          positions.push(i + 1);
        }
      });
      tail = { rows, positions, known: rows.length };
    } else {
      tail = await b.tailOf(column, b.share, keys);
    }
    const series = splitSeries(keys, b.timeColumns, tail, output, last);
    perColumn.push({ column, series, known: tail.known, read: tail.rows.length });
  }
  return perColumn;
}

/** The upload's first rows holding every series drawn, whole; null when they are not few, or not found so. */
async function headRows(b: PanelBuild, all: SeriesKey[], picked: number[]): Promise<Row[] | null> {
  const { panel } = b;
  const reported = panel.perSeries;
  const through = Math.max(...picked);
  if (through >= reported.length) return null;
  const forecastRows = Math.ceil(b.outputRows / Math.max(1, panel.series));
  let rows = 0;
  for (let i = 0; i <= through; i++) rows += reported[i]!.rows + forecastRows;
  const limit = Math.ceil(rows * 1.1) + 50;
  if (limit > HEAD_READ_MAX_ROWS) return null;
  const read = await b.readInput(limit);
  // Each series one run of rows; the last run may be cut by the limit unless the whole input came.
  const runs = new Set<string>();
  let previous: string | undefined;
  for (const row of read) {
    const key = JSON.stringify(keyOf(row, panel.keys));
    if (key === previous) continue;
    if (runs.has(key)) return null;
    runs.add(key);
    previous = key;
  }
  const whole = read.length < limit;
  if (whole) return read;
  for (const i of picked) {
    const key = JSON.stringify(all[i]);
    if (!runs.has(key) || key === previous) return null;
  }
  return read;
}
