import type { TopLevelSpec } from 'vega-lite';
import type { OutputSelection, SelectionReport } from '../../training/types.js';
import type { Caller } from '../caller.js';
import type { DataService } from '../data/data.service.js';
import { Errors, isAppError } from '../errors.js';
import { score } from '../jobs/explanation.js';
import { JOB_STATUS_NAMES } from '../jobs/job-status.js';
import type { JobsService } from '../jobs/jobs.service.js';
import type { JobStatus } from '../../db/tables/jobs.js';
import { classPanel, seriesPanel, timeAxis, type ColumnInfo, type PanelData, type Row } from './chart-data.js';
import { classSpec, seriesSpec, stackSpecs, type PanelTitle } from './chart-spec.js';
import { createRenderPool, type RenderPool, type RenderPoolOptions } from './render-pool.js';

export type ChartFormat = 'svg' | 'png' | 'vega';

export interface ChartQuery {
  jobId: number;
  /** One output column; absent: every output column, one panel each. */
  column?: string;
  /** The latest known rows drawn; 0: all. */
  history: number;
  width: number;
  height: number;
}

/** The chart's address for a job (the chat's forecast tool hands it out); the browser adds its session cookie. */
export function chartAddress(publicUrl: string, jobId: number): string {
  return `${publicUrl}/api/202203010900/charts.php?job_id=${jobId}&format=png`;
}

export interface ChartsServiceDeps {
  jobs: Pick<JobsService, 'get'>;
  data: Pick<DataService, 'columns' | 'rows'>;
  /** What draws SVG and PNG: by default a worker-thread pool (render-pool.ts) with these options. */
  renderer?: RenderPool | RenderPoolOptions;
}

/** The largest image drawn (4000 x 4000): a PNG is rasterised whole in memory, 4 bytes a pixel. */
export const MAX_PIXELS = 16_000_000;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "sales: sarima, backtest MAE 4.1 vs best naive seasonal-naive 9.3" from the job's selection report. */
function titleOf(panel: PanelData, selection: SelectionReport | null, axisNote: string): PanelTitle {
  const chosen: OutputSelection | undefined = selection?.outputs.find((o) => o.column === panel.column);
  // A description that already names the choice ("combination of sarima (0.55), linear (0.45)") stands alone.
  const model = !chosen ? 'neural network' : !chosen.description || chosen.description.startsWith(chosen.chosen) ? chosen.description || chosen.chosen : `${chosen.chosen} (${chosen.description})`;
  const error = chosen
    ? `backtest ${chosen.metric} ${score(chosen.metric, chosen.error)} vs best naive ${chosen.baseline.name} ${score(chosen.metric, chosen.baseline.error)}`
    : 'legacy single network: no backtest selection';
  const history = panel.shownRows < panel.knownRows ? `last ${panel.shownRows} of ${plural(panel.knownRows, 'known row')}` : plural(panel.knownRows, 'known row');
  const bands = panel.kind === 'series' && panel.withIntervals ? ', 80% and 95% intervals' : '';
  const other = panel.kind === 'classes' && panel.otherClasses > 0 ? `; ${plural(panel.otherClasses, 'rarer class')} not drawn` : '';
  const forecast = plural(panel.forecastRows, panel.kind === 'classes' ? 'predicted row' : 'forecast row');
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

/**
 * Charts of a job's latest output (issue 24): per output column, its history, the forecast, the 80%/95%
 * bands and the boundary, titled with the winning model against the best naive baseline. Reads through
 * the data service, so only the job's owner or an administrator sees it, as with GET /data.
 */
export function createChartsService({ jobs, data, renderer }: ChartsServiceDeps) {
  const render: RenderPool = renderer && 'png' in renderer ? renderer : createRenderPool(renderer);

  async function build(caller: Caller, q: ChartQuery): Promise<TopLevelSpec[]> {
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
    const rowsOf = (output: 0 | 1) =>
      data.rows(caller, { jobId: q.jobId, output, progress: 0, limit: 0, insight: 0, alter: 0, intervals: output }) as Promise<Row[]>;
    const [input, output] = await Promise.all([rowsOf(0), rowsOf(1)]);
    if (output.length === 0) throw noForecast();

    const selection = job.selection ?? null;
    const forecasted = forecastColumns(outputColumns, selection, output[0]!);
    if (forecasted.length === 0) throw noForecast();
    let columns = forecasted;
    if (q.column !== undefined) {
      const wanted = q.column.trim().toLowerCase();
      const found = forecasted.find((c) => c.name === q.column) ?? forecasted.find((c) => c.name.toLowerCase() === wanted);
      if (!found) throw Errors.invalidParameter('column', `'${q.column}' is not a forecast column of job ${q.jobId} (columns: ${forecasted.map((c) => c.name).join(', ')})`);
      columns = [found];
    }
    if (q.width * q.height * columns.length > MAX_PIXELS) {
      throw Errors.invalidParameter('height', `${columns.length} panels of ${q.width} x ${q.height} exceed ${MAX_PIXELS / 1e6} million pixels; ask for one column or a smaller size`);
    }

    // k-fold selection means the engine found no time axis: tabular rows, drawn by row number.
    const tabular = selection?.scheme === 'k-fold';
    const axis = tabular ? null : timeAxis(inputColumns, input, output);
    const size = { width: q.width, height: q.height };
    return columns.map((column) => {
      const kind = selection?.outputs.find((o) => o.column === column.name)?.kind ?? (column.type === 'numeric' ? 'numeric' : 'categorical');
      if (kind === 'categorical') {
        const panel = classPanel(column.name, input, output, q.history);
        return classSpec(panel, titleOf(panel, selection, '; class counts'), size);
      }
      const panel = seriesPanel(column.name, input, output, q.history, axis);
      const note = tabular ? '; no time axis: known rows, then predicted rows, by row number' : panel.axis === 'row' ? '; by row number (no readable dates)' : '';
      return seriesSpec(panel, titleOf(panel, selection, note), size, tabular ? 'points' : 'line');
    });
  }

  return {
    /** The Vega-Lite specification (inline data): one panel, or the panels stacked. */
    async spec(caller: Caller, q: ChartQuery): Promise<TopLevelSpec> {
      return stackSpecs(await build(caller, q));
    },

    async svg(caller: Caller, q: ChartQuery): Promise<string> {
      return render.svg(await build(caller, q), { width: q.width, height: q.height });
    },

    async png(caller: Caller, q: ChartQuery): Promise<Buffer> {
      return render.png(await build(caller, q), { width: q.width, height: q.height });
    },

    /** Ends the drawing threads (app close); a later chart starts them again. */
    close: () => render.close(),
  };
}

export type ChartsService = ReturnType<typeof createChartsService>;
