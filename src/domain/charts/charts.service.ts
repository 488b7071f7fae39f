import type { TopLevelSpec } from 'vega-lite';
import type { OutputSelection, PanelReport, PanelSeriesReport, SelectionReport } from '../../training/types.js';
import type { Caller } from '../caller.js';
import type { DataService } from '../data/data.service.js';
import { Errors, isAppError } from '../errors.js';
import { score } from '../jobs/explanation.js';
import { JOB_STATUS_NAMES } from '../jobs/job-status.js';
import type { JobsService } from '../jobs/jobs.service.js';
import type { JobStatus } from '../../db/tables/jobs.js';
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
  timeAxis,
  type ColumnInfo,
  type KnownRows,
  type PanelData,
  type Row,
  type SeriesKey,
  type SeriesRows,
} from './chart-data.js';
import { classSpec, gridSpec, headerSpec, seriesSpec, stackSpecs, type PanelTitle } from './chart-spec.js';
import { createRenderPool, type RenderPool, type RenderPoolOptions } from './render-pool.js';
import type { Placement } from './render.js';

/** Text inputs read as possible whole dates when a job has no date column. */
const MAX_TEXT_DATE_COLUMNS = 3;

export type ChartFormat = 'svg' | 'png' | 'vega';

export interface ChartQuery {
  jobId: number;
  /** One output column; absent: every output column, one panel each. */
  column?: string;
  /** Uploads of many series: which series to draw (the `series=` syntax of parseSeriesList); absent: the first MAX_SERIES_PANELS. */
  series?: string;
  /** The latest known rows drawn; 0: all (both at most CHART_MAX_HISTORY_ROWS). */
  history: number;
  width: number;
  height: number;
}

/** The chart's address for a job (the chat's forecast tool hands it out); the browser adds its session cookie. */
export function chartAddress(publicUrl: string, jobId: number, series?: SeriesKey[]): string {
  const picked = series && series.length > 0 ? `&series=${encodeURIComponent(series.map(seriesParam).join(','))}` : '';
  return `${publicUrl}/api/202203010900/charts.php?job_id=${jobId}&format=png${picked}`;
}

/** Small panels one chart of many series draws at most; `series=` asks for others. */
export const MAX_SERIES_PANELS = 12;

/**
 * The most input rows a chart of many series reads from the upload's head (every column): beyond, the
 * series drawn are read as the last known rows, like any chart. A 500-series monthly panel's last 57,000
 * known rows took 4 s on PGlite; its first 12 series, 1,500 rows from the head, a small part of that.
 */
const HEAD_READ_MAX_ROWS = 20_000;

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/** One output column's rows of the series drawn, and how many of its known rows were read. */
interface PanelColumn {
  column: ColumnInfo;
  series: SeriesRows[];
  known: number;
  read: number;
}

export interface ChartsServiceDeps {
  jobs: Pick<JobsService, 'get'>;
  data: Pick<DataService, 'columns' | 'rows' | 'knownTail'>;
  /** What draws SVG and PNG: by default a worker-thread pool (render-pool.ts) with these options. */
  renderer?: RenderPool | RenderPoolOptions;
}

/** The largest image drawn (4000 x 4000): a PNG is rasterised whole in memory, 4 bytes a pixel. */
export const MAX_PIXELS = 16_000_000;

/**
 * The most known rows one chart reads and draws, shared among its panels, whatever `history` asks (0,
 * "all", included): a 3.4-million-row input must not come whole into the API for one picture (issue 22's
 * rule); 100,000 points still draw on the render pool well within its time and memory budget.
 */
export const CHART_MAX_HISTORY_ROWS = 100_000;

/** The most output rows a chart reads: the first ones (the nearest forecast steps); a tabular job may predict millions. */
export const CHART_MAX_FORECAST_ROWS = 10_000;

/** What the reading cut off, for the subtitle. */
interface Cuts {
  /** The share of CHART_MAX_HISTORY_ROWS each panel had, when it (not `history`) bounded the rows drawn. */
  historyCap?: number;
  /** How many output rows are stored, when only the first CHART_MAX_FORECAST_ROWS were read. */
  outputRows?: number;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "sales: sarima, backtest MAE 4.1 vs best naive seasonal-naive 9.3" from the job's selection report. */
function titleOf(panel: PanelData, selection: SelectionReport | null, axisNote: string, cuts: Cuts): PanelTitle {
  const chosen: OutputSelection | undefined = selection?.outputs.find((o) => o.column === panel.column);
  // A description that already names the choice ("combination of sarima (0.55), linear (0.45)") stands alone.
  const model = !chosen ? 'neural network' : !chosen.description || chosen.description.startsWith(chosen.chosen) ? chosen.description || chosen.chosen : `${chosen.chosen} (${chosen.description})`;
  const error = chosen
    ? `backtest ${chosen.metric} ${score(chosen.metric, chosen.error)} vs best naive ${chosen.baseline.name} ${score(chosen.metric, chosen.baseline.error)}`
    : 'legacy single network: no backtest selection';
  const capped = cuts.historyCap !== undefined && panel.shownRows < panel.knownRows ? ` (at most ${cuts.historyCap} drawn)` : '';
  const history = panel.shownRows < panel.knownRows ? `last ${panel.shownRows} of ${plural(panel.knownRows, 'known row')}${capped}` : plural(panel.knownRows, 'known row');
  const bands = panel.kind === 'series' && panel.withIntervals ? ', 80% and 95% intervals' : '';
  const other = panel.kind === 'classes' && panel.otherClasses > 0 ? `; ${plural(panel.otherClasses, 'rarer class')} not drawn` : '';
  const cut = cuts.outputRows !== undefined ? ` (from the first ${CHART_MAX_FORECAST_ROWS} of ${cuts.outputRows} output rows)` : '';
  const forecast = `${plural(panel.forecastRows, panel.kind === 'classes' ? 'predicted row' : 'forecast row')}${cut}`;
  return { text: `${panel.column}: ${model}`, subtitle: [error, `${history}, ${forecast}${bands}${axisNote}${other}`] };
}

/**
 * The output columns a panel is drawn for: those the job's roles mark as outputs; for an output stored
 * without them (no input to copy roles from), those the selection names, else those with stored intervals.
 */
function forecastColumns(columns: ColumnInfo[], selection: SelectionReport | null, firstRow: Row): ColumnInfo[] {
  const byRole = columns.filter((c) => c.role === 'output');
  if (byRole.length > 0) return byRole;
  const selected = columns.filter((c) => selection?.outputs.some((o) => o.column === c.name));
  if (selected.length > 0) return selected;
  return columns.filter((c) => c.role !== 'date' && `${c.name}_lo80` in firstRow);
}

/** What one chart draws: its panels, where each goes in an image of `size`, and the one specification of format=vega. */
interface Drawing {
  panels: TopLevelSpec[];
  size: { width: number; height: number };
  /** Absent: the panels are stacked, each `size` (the image is `size.height` x panels tall). */
  at?: Placement[];
  spec: TopLevelSpec;
}

/** The figures of a per-series selection, short enough for a small panel's subtitle. */
function seriesFigures(metric: OutputSelection['metric'], chosen: PanelSeriesReport['outputs'][number] | undefined, note: string | undefined): string[] {
  const lines = chosen ? [`backtest ${metric} ${score(metric, chosen.error)} vs ${chosen.baseline.name} ${score(metric, chosen.baseline.error)}`] : [];
  if (note) lines.push(note);
  return lines;
}

/** "sarima 5, ets 3, theta 1": the families by how often they won, most first. */
const winsText = (wins: Record<string, number>) =>
  Object.entries(wins)
    .filter(([, n]) => n > 0)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');

/**
 * Charts of a job's latest output (issue 24): per output column, its history, the forecast, the 80%/95%
 * bands and the boundary, titled with the winning model against the best naive baseline. Reads through
 * the data service, so only the job's owner or an administrator sees it, as with GET /data; reads only
 * the rows it draws (each panel's last known rows, the first output rows), never a whole long input.
 * An upload of many series (issue 33) is drawn as a grid of small panels, one per series and column.
 */
export function createChartsService({ jobs, data, renderer }: ChartsServiceDeps) {
  const render: RenderPool = renderer && 'png' in renderer ? renderer : createRenderPool(renderer);

  async function build(caller: Caller, q: ChartQuery): Promise<Drawing> {
    const job = await jobs.get(caller, q.jobId);
    const noForecast = () => Errors.noForecast(q.jobId, JOB_STATUS_NAMES[job.status as JobStatus] ?? String(job.status));
    let outputColumns: ColumnInfo[];
    try {
      outputColumns = await data.columns(caller, q.jobId, 1);
    } catch (error) {
      if (isAppError(error) && error.code === 'not_found') throw noForecast();
      throw error;
    }
    const inputColumns: ColumnInfo[] = await data.columns(caller, q.jobId, 0).catch(() => outputColumns);
    const outputQuery = { jobId: q.jobId, output: 1 as const, limit: 0, insight: 0, alter: 0, intervals: 1 as const };
    const [output, [stored]] = (await Promise.all([
      data.rows(caller, { ...outputQuery, progress: 0, cap: CHART_MAX_FORECAST_ROWS }),
      data.rows(caller, { ...outputQuery, progress: 1 }),
    ])) as [Row[], [{ count: string }]];
    if (output.length === 0) throw noForecast();
    const outputRows = Number(stored.count);

    const selection = job.selection ?? null;
    const panel = selection?.panel && selection.panel.keys.length > 0 ? selection.panel : undefined;
    const keys = new Set(panel?.keys ?? []);
    const forecasted = forecastColumns(outputColumns, selection, output[0]!).filter((c) => !keys.has(c.name));
    if (forecasted.length === 0) throw noForecast();
    let columns = forecasted;
    if (q.column !== undefined) {
      const wanted = q.column.trim().toLowerCase();
      const found = forecasted.find((c) => c.name === q.column) ?? forecasted.find((c) => c.name.toLowerCase() === wanted);
      if (!found) throw Errors.invalidParameter('column', `'${q.column}' is not a forecast column of job ${q.jobId} (columns: ${forecasted.map((c) => c.name).join(', ')})`);
      columns = [found];
    }
    if (!panel && q.series !== undefined) {
      throw Errors.invalidParameter('series', `job ${q.jobId} holds one series (its upload has no key columns); series picks among the series of an upload of many`);
    }

    // The panels share the chart's budget of known rows: the drawing costs by the points of all of them.
    const share = Math.max(1, Math.floor(CHART_MAX_HISTORY_ROWS / columns.length));
    const readCut = output.length === CHART_MAX_FORECAST_ROWS && outputRows > output.length ? { outputRows } : {};
    // Without a date role, text inputs may be whole dates (chart-data timeAxis reads them as the engine does):
    // the first few are read with the known rows. Key columns are never the time axis.
    const timeColumns = inputColumns.filter((c) => !keys.has(c.name));
    const dated = timeColumns.filter((c) => c.role === 'date').map((c) => c.name);
    const dateColumns = dated.length > 0 ? dated : timeColumns.filter((c) => c.role === 'input' && c.type !== 'numeric').slice(0, MAX_TEXT_DATE_COLUMNS).map((c) => c.name);
    // k-fold selection means the engine found no time axis: tabular rows, drawn by row number.
    const tabular = selection?.scheme === 'k-fold';
    const kindOf = (column: ColumnInfo) => selection?.outputs.find((o) => o.column === column.name)?.kind ?? (column.type === 'numeric' ? 'numeric' : 'categorical');
    const tailOf = (column: ColumnInfo, last: number, extra: string[] = []) =>
      data.knownTail(caller, { jobId: q.jobId, column: column.name, known: kindOf(column) === 'categorical' ? 'text' : 'number', last, columns: [...dateColumns, ...extra] });

    const readInput = async (limit: number) => (await data.rows(caller, { jobId: q.jobId, output: 0, progress: 0, limit, insight: 0, alter: 0 })) as Row[];
    if (panel) return buildPanel({ q, panel, columns, output, share, readCut, timeColumns, tabular, kindOf, tailOf, readInput, outputRows });

    const last = q.history > 0 && q.history <= share ? q.history : share;
    const cuts: Cuts = { ...(last === share && last !== q.history ? { historyCap: share } : {}), ...readCut };
    if (q.width * q.height * columns.length > MAX_PIXELS) {
      throw Errors.invalidParameter('height', `${columns.length} panels of ${q.width} x ${q.height} exceed ${MAX_PIXELS / 1e6} million pixels; ask for one column or a smaller size`);
    }
    const size = { width: q.width, height: q.height };
    const specs: TopLevelSpec[] = [];
    // One panel's rows at a time, so a chart of many columns holds one connection and one tail at once.
    for (const column of columns) {
      const tail = await tailOf(column, last);
      if (kindOf(column) === 'categorical') {
        const drawn = classPanel(column.name, tail, output);
        specs.push(classSpec(drawn, titleOf(drawn, selection, '; class counts', cuts), size));
        continue;
      }
      // The dates are read (and their format detected) on the rows drawn only.
      const axis = tabular ? null : timeAxis(inputColumns, tail.rows, output);
      const drawn = seriesPanel(column.name, tail, output, axis);
      const note = tabular ? '; no time axis: known rows, then predicted rows, by row number' : drawn.axis === 'row' ? '; by row number (no readable dates)' : '';
      specs.push(seriesSpec(drawn, titleOf(drawn, selection, note, cuts), size, tabular ? 'points' : 'line'));
    }
    return { panels: specs, size, spec: stackSpecs(specs) };
  }

  interface PanelBuild {
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
  async function buildPanel(b: PanelBuild): Promise<Drawing> {
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

  return {
    /** The Vega-Lite specification (inline data): one panel, the panels stacked, or a grid of small panels. */
    async spec(caller: Caller, q: ChartQuery): Promise<TopLevelSpec> {
      return (await build(caller, q)).spec;
    },

    async svg(caller: Caller, q: ChartQuery): Promise<string> {
      const drawing = await build(caller, q);
      return render.svg(drawing.panels, drawing.size, drawing.at);
    },

    async png(caller: Caller, q: ChartQuery): Promise<Buffer> {
      const drawing = await build(caller, q);
      return render.png(drawing.panels, drawing.size, drawing.at);
    },

    /** Ends the drawing threads (app close); a later chart starts them again. */
    close: () => render.close(),
  };
}

/** "last 48 of 60 known rows, 6 forecast rows" for a small panel. */
function rowsText(shown: number, known: number, forecast: number): string {
  const history = shown < known ? `last ${shown} of ${plural(known, 'known row')}` : plural(known, 'known row');
  return `${history}, ${plural(forecast, 'forecast row')}`;
}

/**
 * The grid's header: the columns and how many series by which keys; which series are drawn and how to
 * ask for others; how often each family won; and what the reading cut.
 */
function panelHeader(
  b: { q: ChartQuery; panel: PanelReport; columns: ColumnInfo[]; readCut: { outputRows?: number }; tabular: boolean },
  all: SeriesKey[],
  picked: number[],
  perColumn: PanelColumn[],
): PanelTitle {
  const { q, panel, columns } = b;
  const total = all.length;
  const keyed = panel.keys.join(' | ');
  const subtitle: string[] = [];
  // The hint names the series after the last one drawn (from the first again past the end).
  const next = (Math.max(...picked) + 1) % total;
  const examples = all.slice(next, next + 2).map(seriesParam).join(',');
  const howToAsk =
    `others: series=${next + 1}..${Math.min(total, next + MAX_SERIES_PANELS)} (positions in upload order)` +
    `, or their ${keyed} values${panel.keys.length > 1 ? ' (joined with |)' : ''} separated by commas${examples ? `, e.g. series=${examples}` : ''}`;
  if (q.series !== undefined) subtitle.push(`${picked.length} of ${total} series as asked (series=${q.series})${total > picked.length ? `; ${howToAsk}` : ''}`);
  else if (total > picked.length) subtitle.push(`series 1-${picked.length} of ${total} drawn, in upload order; ${howToAsk}`);
  else subtitle.push(`all ${total} series, in upload order`);
  const wins = winsText(panel.wins);
  if (wins) subtitle.push(`won by family over ${total} series x ${plural(columns.length, 'output')}: ${wins}`);
  if (perColumn.some((c) => c.read < c.known)) subtitle.push(`only the last ${Math.max(...perColumn.map((c) => c.read))} known rows of the upload are read: earlier series show no history`);
  if (b.readCut.outputRows !== undefined) subtitle.push(`forecasts read from the first ${CHART_MAX_FORECAST_ROWS} of ${b.readCut.outputRows} output rows: later series show none`);
  if (b.tabular) subtitle.push('no time axis: known rows, then predicted rows, by row number');
  else if (perColumn.some((c) => c.series.some((s) => s.axis === null && s.tail.rows.length > 0))) subtitle.push('by row number of the upload (no readable dates)');
  const names = columns.map((c) => c.name).join(', ');
  return { text: `${names}: ${total} series keyed by ${keyed}, one panel each`, subtitle };
}
