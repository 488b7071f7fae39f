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

/** Text inputs read as possible whole dates when a job has no date column. */
const MAX_TEXT_DATE_COLUMNS = 3;

export type ChartFormat = 'svg' | 'png' | 'vega';

export interface ChartQuery {
  jobId: number;
  /** One output column; absent: every output column, one panel each. */
  column?: string;
  /** The latest known rows drawn; 0: all (both at most CHART_MAX_HISTORY_ROWS). */
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

/**
 * Charts of a job's latest output (issue 24): per output column, its history, the forecast, the 80%/95%
 * bands and the boundary, titled with the winning model against the best naive baseline. Reads through
 * the data service, so only the job's owner or an administrator sees it, as with GET /data; reads only
 * the rows it draws (each panel's last known rows, the first output rows), never a whole long input.
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
    const outputQuery = { jobId: q.jobId, output: 1 as const, limit: 0, insight: 0, alter: 0, intervals: 1 as const };
    const [output, [stored]] = (await Promise.all([
      data.rows(caller, { ...outputQuery, progress: 0, cap: CHART_MAX_FORECAST_ROWS }),
      data.rows(caller, { ...outputQuery, progress: 1 }),
    ])) as [Row[], [{ count: string }]];
    if (output.length === 0) throw noForecast();
    const outputRows = Number(stored.count);

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

    // The panels share the chart's budget of known rows: the drawing costs by the points of all of them.
    const share = Math.max(1, Math.floor(CHART_MAX_HISTORY_ROWS / columns.length));
    const last = q.history > 0 && q.history <= share ? q.history : share;
    const cuts: Cuts = {
      ...(last === share && last !== q.history ? { historyCap: share } : {}),
      ...(output.length === CHART_MAX_FORECAST_ROWS && outputRows > output.length ? { outputRows } : {}),
    };
    // Without a date role, text inputs may be whole dates (chart-data timeAxis reads them as the engine does):
    // the first few are read with the known rows.
    const dated = inputColumns.filter((c) => c.role === 'date').map((c) => c.name);
    const dateColumns = dated.length > 0 ? dated : inputColumns.filter((c) => c.role === 'input' && c.type !== 'numeric').slice(0, MAX_TEXT_DATE_COLUMNS).map((c) => c.name);
    // k-fold selection means the engine found no time axis: tabular rows, drawn by row number.
    const tabular = selection?.scheme === 'k-fold';
    const size = { width: q.width, height: q.height };
    const specs: TopLevelSpec[] = [];
    // One panel's rows at a time, so a chart of many columns holds one connection and one tail at once.
    for (const column of columns) {
      const kind = selection?.outputs.find((o) => o.column === column.name)?.kind ?? (column.type === 'numeric' ? 'numeric' : 'categorical');
      const tail = await data.knownTail(caller, { jobId: q.jobId, column: column.name, known: kind === 'categorical' ? 'text' : 'number', last, columns: dateColumns });
      if (kind === 'categorical') {
        const panel = classPanel(column.name, tail, output);
        specs.push(classSpec(panel, titleOf(panel, selection, '; class counts', cuts), size));
        continue;
      }
      // The dates are read (and their format detected) on the rows drawn only.
      const axis = tabular ? null : timeAxis(inputColumns, tail.rows, output);
      const panel = seriesPanel(column.name, tail, output, axis);
      const note = tabular ? '; no time axis: known rows, then predicted rows, by row number' : panel.axis === 'row' ? '; by row number (no readable dates)' : '';
      specs.push(seriesSpec(panel, titleOf(panel, selection, note, cuts), size, tabular ? 'points' : 'line'));
    }
    return specs;
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
