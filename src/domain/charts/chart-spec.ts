import type { TopLevelSpec } from 'vega-lite';
import type { ClassPanel, SeriesPanel } from './chart-data.js';
import { wrapText } from './text-metrics.js';

/**
 * Vega-Lite specifications of chart panels. Field names are fixed (x, value, lo80, ...): column names
 * from uploads only ever appear as title text, never inside a field or an expression.
 */

export const VEGA_LITE_SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

export interface PanelTitle {
  text: string;
  subtitle: string[];
}

export interface PanelSize {
  width: number;
  height: number;
}

/** A small panel of a grid (one series of many): a smaller title, no legend or y title of its own (the grid's header has them). */
export interface PanelStyle {
  small?: boolean;
}

/** Colours from the Tableau 10 scheme (Vega's default), pinned so every panel and legend agree. */
const SERIES = ['history', 'forecast', '80% interval', '95% interval'];
// Bands are opaque light tints of the forecast's orange, so the legend shows what the chart shows.
const SERIES_COLORS = ['#4c78a8', '#f58518', '#f9c089', '#fde3c8'];
const CLASS_PARTS = ['known', 'predicted'];
const LEGEND = { symbolType: 'square', symbolOpacity: 1 };
const CLASS_COLORS = ['#4c78a8', '#f58518'];

/** Each panel fills exactly width x height (axes, title and legend included), so a PNG has the asked size. */
const frame = (size: PanelSize) => ({ width: size.width, height: size.height, autosize: { type: 'fit' as const, contains: 'padding' as const } });

/** Vega-Lite's default padding around a view, inside the fitted size. */
const PADDING = 5;
/** Title sizes, set rather than left to Vega's defaults, because titles are wrapped by their measured width. */
const FONT = { title: 13, smallTitle: 12, subtitle: 12, smallSubtitle: 11 };
const LINE_GAP = 2;

const configFor = (style: PanelStyle = {}) => ({
  legend: { orient: 'top' as const, title: null },
  title: {
    anchor: 'start' as const,
    subtitleColor: '#555',
    fontSize: style.small ? FONT.smallTitle : FONT.title,
    subtitleFontSize: style.small ? FONT.smallSubtitle : FONT.subtitle,
  },
});
const config = configFor();

/**
 * The title broken into lines that fit the panel's width (measured in the font drawn), so a long model
 * description never widens the title past the image, which made autosize "fit" shrink the plot. `limit`
 * cuts any line the measure got wrong rather than let it push the plot aside.
 */
function wrappedTitle(title: PanelTitle, width: number, style: PanelStyle = {}) {
  const room = Math.max(40, width - 2 * PADDING - 2);
  const text = wrapText(title.text, room, style.small ? FONT.smallTitle : FONT.title, true);
  const subtitle = title.subtitle.flatMap((line) => wrapText(line, room, style.small ? FONT.smallSubtitle : FONT.subtitle));
  return { text: text.length === 1 ? text[0]! : text, subtitle, limit: room + 2 };
}

/** Pixels a wrapped title takes above the plot: its lines, the subtitle's, and the gaps between. */
export function titleHeight(title: ReturnType<typeof wrappedTitle>, style: PanelStyle = {}): number {
  const lines = Array.isArray(title.text) ? title.text.length : 1;
  const big = style.small ? FONT.smallTitle : FONT.title;
  const small = style.small ? FONT.smallSubtitle : FONT.subtitle;
  return lines * (big + LINE_GAP) + (title.subtitle.length > 0 ? 3 + title.subtitle.length * (small + LINE_GAP) : 0);
}

const DAY_MS = 86_400_000;

/** Consecutive drawn rows closer than a day apart: the axis needs the time of day. */
function subDaily(panel: SeriesPanel): boolean {
  const xs = [...panel.history, ...panel.forecast].map((p) => p.x);
  for (let i = 1; i < xs.length; i++) {
    const gap = (xs[i] as number) - (xs[i - 1] as number);
    if (gap > 0 && gap < DAY_MS) return true;
  }
  return false;
}

/**
 * A numeric output: `line` draws history and forecast over time with the 80%/95% bands and a dashed
 * rule at the boundary; `points` (tabular outputs, no time axis) draws known and predicted values by
 * row number with the intervals as error bars.
 */
export function seriesSpec(panel: SeriesPanel, title: PanelTitle, size: PanelSize, style: 'line' | 'points', look: PanelStyle = {}): TopLevelSpec {
  const temporal = panel.axis === 'time';
  // Sub-daily rows (half-hourly load, hourly traffic) read by the time of day: Vega's automatic ticks on a
  // span of days would label only the dates.
  const timeOfDay = temporal && subDaily(panel);
  const x = {
    field: 'x',
    type: temporal ? ('temporal' as const) : ('quantitative' as const),
    title: temporal ? null : 'row',
    scale: temporal ? { type: 'utc' as const } : { zero: false },
    axis: { labelOverlap: true, ...(timeOfDay ? { format: '%d %b %H:%M' } : {}) },
  };
  // A small panel's y axis needs no title: the grid's header names the column.
  const y = (field: string) => ({ field, type: 'quantitative' as const, title: look.small ? null : panel.column, scale: { zero: false } });
  // Each layer names its series in a field (the schema allows a scale and legend only on field definitions).
  const color = () => ({ field: 'series', type: 'nominal' as const, scale: { domain: SERIES, range: SERIES_COLORS }, legend: look.small ? null : LEGEND });
  // Each layer reads only its own rows: the long history is filtered by no other layer. x is already a
  // number (ms since the epoch on a time axis), so nothing is parsed per row.
  const rows = (name: 'history' | 'forecast' | 'boundary') => ({ name, format: { parse: null } });
  const predicted = '!datum.bridge';
  const layers: unknown[] = [];
  if (panel.withIntervals) {
    for (const level of ['95', '80'] as const) {
      const bounds = { y: y(`lo${level}`), y2: { field: `hi${level}` }, color: color() };
      const named = { calculate: `'${level}% interval'`, as: 'series' };
      layers.push(
        style === 'line'
          ? { data: rows('forecast'), transform: [{ filter: `isValid(datum.lo${level})` }, named], mark: { type: 'area' }, encoding: bounds }
          : { data: rows('forecast'), transform: [{ filter: `${predicted} && isValid(datum.lo${level})` }, named], mark: { type: 'rule', strokeWidth: level === '80' ? 3 : 1 }, encoding: bounds },
      );
    }
  }
  const named = (series: string) => ({ calculate: `'${series}'`, as: 'series' });
  if (style === 'line') {
    layers.push(
      { data: rows('history'), transform: [named('history')], mark: { type: 'line', strokeWidth: 1.5 }, encoding: { y: y('value'), color: color() } },
      { data: rows('forecast'), transform: [named('forecast')], mark: { type: 'line', strokeWidth: 2, point: panel.forecastRows <= 60 }, encoding: { y: y('value'), color: color() } },
    );
  } else {
    layers.push(
      { data: rows('history'), transform: [named('history')], mark: { type: 'point', size: 12, filled: true }, encoding: { y: y('value'), color: color() } },
      { data: rows('forecast'), transform: [{ filter: predicted }, named('forecast')], mark: { type: 'point', size: 30, filled: true }, encoding: { y: y('value'), color: color() } },
    );
  }
  if (panel.boundary !== null) {
    layers.push({ data: rows('boundary'), mark: { type: 'rule', strokeDash: [4, 4], color: '#666' } });
  }
  return {
    $schema: VEGA_LITE_SCHEMA,
    ...frame(size),
    title: wrappedTitle(title, size.width, look),
    datasets: { history: panel.history, forecast: panel.forecast, boundary: panel.boundary === null ? [] : [{ x: panel.boundary }] },
    encoding: { x },
    layer: layers,
    config: configFor(look),
  } as unknown as TopLevelSpec;
}

/** A categorical output: bars of each class's count among the known rows and among the predicted rows. */
export function classSpec(panel: ClassPanel, title: PanelTitle, size: PanelSize, look: PanelStyle = {}): TopLevelSpec {
  return {
    $schema: VEGA_LITE_SCHEMA,
    ...frame(size),
    title: wrappedTitle(title, size.width, look),
    data: { values: panel.counts as unknown as Record<string, unknown>[] },
    mark: { type: 'bar' },
    encoding: {
      x: { field: 'value', type: 'nominal', title: look.small ? null : panel.column, sort: null, axis: { labelOverlap: true, labelLimit: 120, labelAngle: 0 } },
      xOffset: { field: 'part', type: 'nominal', sort: ['known', 'predicted'] },
      y: { field: 'count', type: 'quantitative', title: 'rows' },
      color: { field: 'part', type: 'nominal', scale: { domain: CLASS_PARTS, range: CLASS_COLORS }, title: null, ...(look.small ? { legend: null } : {}) },
    },
    config: configFor(look),
  };
}

/** A panel as a view inside a composition: no $schema, autosize or config, its named datasets inline. */
function inner(panel: TopLevelSpec): Record<string, unknown> {
  const { $schema: _schema, autosize: _autosize, config: _config, datasets, ...rest } = panel as unknown as Record<string, unknown>;
  if (!datasets) return rest;
  // Named datasets live only at the top level and panels share names: each layer takes its rows inline.
  const named = datasets as Record<string, unknown[]>;
  const layers = (rest.layer as { data?: { name: string; format?: unknown } }[]).map((layer) =>
    layer.data ? { ...layer, data: { values: named[layer.data.name], format: layer.data.format } } : layer,
  );
  return { ...rest, layer: layers };
}

/** Several panels as one specification: stacked, each keeping its own size. */
export function stackSpecs(panels: TopLevelSpec[]): TopLevelSpec {
  if (panels.length === 1) return panels[0]!;
  return { $schema: VEGA_LITE_SCHEMA, vconcat: panels.map(inner), config } as unknown as TopLevelSpec;
}

/** A small panel's colour legend put back: in one specification the shared colour scale draws one legend for all. */
function withLegend(panel: Record<string, unknown>): Record<string, unknown> {
  type Encoded = { encoding?: { color?: Record<string, unknown> } };
  const shown = <T extends Encoded>(view: T): T =>
    view.encoding?.color && view.encoding.color.legend === null ? { ...view, encoding: { ...view.encoding, color: { ...view.encoding.color, legend: LEGEND } } } : view;
  const layers = panel.layer as Encoded[] | undefined;
  return layers ? { ...panel, layer: layers.map(shown) } : shown(panel as Encoded);
}

/**
 * The small panels of many series as one specification (format=vega): a grid of `columns`, the header's
 * title over it and one legend for all (the colours are the same in every panel). Each panel's x and y
 * scales are its own: series differ in scale and span.
 */
export function gridSpec(header: PanelTitle, panels: TopLevelSpec[], columns: number, width: number): TopLevelSpec {
  return {
    $schema: VEGA_LITE_SCHEMA,
    title: wrappedTitle(header, width),
    columns,
    concat: panels.map((panel) => withLegend(inner(panel))),
    resolve: { scale: { x: 'independent', y: 'independent', color: 'shared' } },
    config,
  } as unknown as TopLevelSpec;
}

/**
 * The header of a grid drawn as an image: the title, its subtitle and the legend of the panels below
 * (which have none of their own), `width` wide and as tall as its lines need. Its one mark is invisible:
 * Vega-Lite draws a legend only for an encoding, so the legend's entries are its rows.
 */
export function headerSpec(title: PanelTitle, width: number, kind: 'series' | 'classes'): { spec: TopLevelSpec; height: number } {
  const wrapped = wrappedTitle(title, width);
  const height = 2 * PADDING + titleHeight(wrapped) + 28;
  const [domain, range] = kind === 'series' ? [SERIES, SERIES_COLORS] : [CLASS_PARTS, CLASS_COLORS];
  const spec = {
    $schema: VEGA_LITE_SCHEMA,
    ...frame({ width, height }),
    title: wrapped,
    data: { values: domain.map((part) => ({ part })) },
    mark: { type: 'square', opacity: 0 },
    encoding: {
      color: { field: 'part', type: 'nominal', scale: { domain, range }, legend: LEGEND },
    },
    config: { ...config, view: { stroke: null } },
  } as unknown as TopLevelSpec;
  return { spec, height };
}
