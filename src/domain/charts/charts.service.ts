import type { TopLevelSpec } from 'vega-lite';
import type { SelectionReport } from '../../training/index.js';
import type { Caller } from '../caller.js';
import type { DataService } from '../data/data.service.js';
import { Errors, isAppError } from '../errors.js';
import { JOB_STATUS_NAMES } from '../jobs/job-status.js';
import type { JobsService } from '../jobs/jobs.service.js';
import type { JobStatus } from '../../db/tables/jobs.js';
import { classPanel, seriesPanel, seriesParam, timeAxis, type ColumnInfo, type Row, type SeriesKey } from './chart-data.js';
import { CHART_MAX_FORECAST_ROWS, CHART_MAX_HISTORY_ROWS, MAX_PIXELS, type ChartQuery, type Drawing } from './chart-query.js';
import { classSpec, seriesSpec, stackSpecs } from './chart-spec.js';
import { titleOf, type Cuts } from './chart-titles.js';
import { buildPanel } from './panel-chart.js';
import { createRenderPool, type RenderPool, type RenderPoolOptions } from './render-pool.js';

export { CHART_MAX_FORECAST_ROWS, CHART_MAX_HISTORY_ROWS, MAX_PIXELS, MAX_SERIES_PANELS, type ChartFormat, type ChartQuery } from './chart-query.js';

/** Text inputs read as possible whole dates when a job has no date column. */
const MAX_TEXT_DATE_COLUMNS = 3;

/** The chart's address for a job (the chat's forecast tool hands it out); the browser adds its session cookie. */
export function chartAddress(publicUrl: string, jobId: number, series?: SeriesKey[]): string {
  const picked = series && series.length > 0 ? `&series=${encodeURIComponent(series.map(seriesParam).join(','))}` : '';
  return `${publicUrl}/api/202203010900/charts.php?job_id=${jobId}&format=png${picked}`;
}

export interface ChartsServiceDeps {
  jobs: Pick<JobsService, 'get'>;
  data: Pick<DataService, 'columns' | 'rows' | 'knownTail'>;
  /** What draws SVG and PNG: by default a worker-thread pool (render-pool.ts) with these options. */
  renderer?: RenderPool | RenderPoolOptions;
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

/**
 * Charts of a job's latest output: per output column, its history, the forecast, the 80%/95%
 * bands and the boundary, titled with the winning model against the best naive baseline. Reads through
 * the data service, so only the job's owner or an administrator sees it, as with GET /data; reads only
 * the rows it draws (each panel's last known rows, the first output rows), never a whole long input.
 * An upload of many series is drawn as a grid of small panels, one per series and column (panel-chart.ts).
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
