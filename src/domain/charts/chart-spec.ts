import type { TopLevelSpec } from 'vega-lite';
import type { ClassPanel, SeriesPanel } from './chart-data.js';

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

/** Colours from the Tableau 10 scheme (Vega's default), pinned so every panel and legend agree. */
const SERIES = ['history', 'forecast', '80% interval', '95% interval'];
// Bands are opaque light tints of the forecast's orange, so the legend shows what the chart shows.
const SERIES_COLORS = ['#4c78a8', '#f58518', '#f9c089', '#fde3c8'];
const CLASS_COLORS = ['#4c78a8', '#f58518'];

/** Each panel fills exactly width x height (axes, title and legend included), so a PNG has the asked size. */
const frame = (size: PanelSize) => ({ width: size.width, height: size.height, autosize: { type: 'fit' as const, contains: 'padding' as const } });
const config = { legend: { orient: 'top' as const, title: null }, title: { anchor: 'start' as const, subtitleColor: '#555' } };

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
export function seriesSpec(panel: SeriesPanel, title: PanelTitle, size: PanelSize, style: 'line' | 'points'): TopLevelSpec {
  const temporal = panel.axis === 'time';
  // Sub-daily rows (half-hourly load, hourly traffic) read by the time of day: Vega's automatic ticks on a
  // span of days would label only the dates (issue 28).
  const timeOfDay = temporal && subDaily(panel);
  const x = {
    field: 'x',
    type: temporal ? ('temporal' as const) : ('quantitative' as const),
    title: temporal ? null : 'row',
    scale: temporal ? { type: 'utc' as const } : { zero: false },
    axis: { labelOverlap: true, ...(timeOfDay ? { format: '%d %b %H:%M' } : {}) },
  };
  const y = (field: string) => ({ field, type: 'quantitative' as const, title: panel.column, scale: { zero: false } });
  // Each layer names its series in a field (the schema allows a scale and legend only on field definitions).
  const color = () => ({ field: 'series', type: 'nominal' as const, scale: { domain: SERIES, range: SERIES_COLORS }, legend: { symbolType: 'square', symbolOpacity: 1 } });
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
    title: { text: title.text, subtitle: title.subtitle },
    datasets: { history: panel.history, forecast: panel.forecast, boundary: panel.boundary === null ? [] : [{ x: panel.boundary }] },
    encoding: { x },
    layer: layers,
    config,
  } as unknown as TopLevelSpec;
}

/** A categorical output: bars of each class's count among the known rows and among the predicted rows. */
export function classSpec(panel: ClassPanel, title: PanelTitle, size: PanelSize): TopLevelSpec {
  return {
    $schema: VEGA_LITE_SCHEMA,
    ...frame(size),
    title: { text: title.text, subtitle: title.subtitle },
    data: { values: panel.counts as unknown as Record<string, unknown>[] },
    mark: { type: 'bar' },
    encoding: {
      x: { field: 'value', type: 'nominal', title: panel.column, sort: null, axis: { labelOverlap: true, labelLimit: 120, labelAngle: 0 } },
      xOffset: { field: 'part', type: 'nominal', sort: ['known', 'predicted'] },
      y: { field: 'count', type: 'quantitative', title: 'rows' },
      color: { field: 'part', type: 'nominal', scale: { domain: ['known', 'predicted'], range: CLASS_COLORS }, title: null },
    },
    config,
  };
}

/** Several panels as one specification: stacked, each keeping its own size. */
export function stackSpecs(panels: TopLevelSpec[]): TopLevelSpec {
  if (panels.length === 1) return panels[0]!;
  const inner = panels.map((panel) => {
    const { $schema: _schema, autosize: _autosize, config: _config, datasets, ...rest } = panel as unknown as Record<string, unknown>;
    if (!datasets) return rest;
    // Named datasets live only at the top level and panels share names: each layer takes its rows inline.
    const named = datasets as Record<string, unknown[]>;
    const layers = (rest.layer as { data?: { name: string; format?: unknown } }[]).map((layer) =>
      layer.data ? { ...layer, data: { values: named[layer.data.name], format: layer.data.format } } : layer,
    );
    return { ...rest, layer: layers };
  });
  return { $schema: VEGA_LITE_SCHEMA, vconcat: inner, config } as unknown as TopLevelSpec;
}
