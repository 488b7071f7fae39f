import type { OutputSelection, PanelReport, PanelSeriesReport, SelectionReport } from '../../training/index.js';
import { score } from '../jobs/explanation.js';
import { seriesParam, type ColumnInfo, type PanelColumn, type PanelData, type SeriesKey } from './chart-data.js';
import { CHART_MAX_FORECAST_ROWS, MAX_SERIES_PANELS, type ChartQuery } from './chart-query.js';
import type { PanelTitle } from './chart-spec.js';

/*
 * What a chart says above its panels: the winning model against the best naive baseline, the rows drawn
 * and what the reading cut; for a panel chart, its header and each small panel's figures.
 */

/** What the reading cut off, for the subtitle. */
export interface Cuts {
  /** The share of CHART_MAX_HISTORY_ROWS each panel had, when it (not `history`) bounded the rows drawn. */
  historyCap?: number;
  /** How many output rows are stored, when only the first CHART_MAX_FORECAST_ROWS were read. */
  outputRows?: number;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "sales: sarima, backtest MAE 4.1 vs best naive seasonal-naive 9.3" from the job's selection report. */
export function titleOf(panel: PanelData, selection: SelectionReport | null, axisNote: string, cuts: Cuts): PanelTitle {
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

/** The figures of a per-series selection, short enough for a small panel's subtitle. */
export function seriesFigures(metric: OutputSelection['metric'], chosen: PanelSeriesReport['outputs'][number] | undefined, note: string | undefined): string[] {
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

/** "last 48 of 60 known rows, 6 forecast rows" for a small panel. */
export function rowsText(shown: number, known: number, forecast: number): string {
  const history = shown < known ? `last ${shown} of ${plural(known, 'known row')}` : plural(known, 'known row');
  return `${history}, ${plural(forecast, 'forecast row')}`;
}

/**
 * The grid's header: the columns and how many series by which keys; which series are drawn and how to
 * ask for others; how often each family won; and what the reading cut.
 */
export function panelHeader(
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
