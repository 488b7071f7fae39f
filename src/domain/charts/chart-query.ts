import type { TopLevelSpec } from 'vega-lite';
import type { Placement } from './render.js';

/*
 * What one chart is asked for, the bounds every chart keeps whatever it is asked, and what building one
 * comes to: shared by the charts service and the panel chart (panel-chart.ts) it hands many series to.
 */

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

/** Small panels one chart of many series draws at most; `series=` asks for others. */
export const MAX_SERIES_PANELS = 12;

/** The largest image drawn (4000 x 4000): a PNG is rasterised whole in memory, 4 bytes a pixel. */
export const MAX_PIXELS = 16_000_000;

/**
 * The most known rows one chart reads and draws, shared among its panels, whatever `history` asks (0,
 * "all", included): a 3.4-million-row input must not come whole into the API for one picture, since one
 * heavy client must not hold up the others; 100,000 points still draw on the render pool well within its
 * time and memory budget.
 */
export const CHART_MAX_HISTORY_ROWS = 100_000;

/** The most output rows a chart reads: the first ones (the nearest forecast steps); a tabular job may predict millions. */
export const CHART_MAX_FORECAST_ROWS = 10_000;

/** What one chart draws: its panels, where each goes in an image of `size`, and the one specification of format=vega. */
export interface Drawing {
  panels: TopLevelSpec[];
  size: { width: number; height: number };
  /** Absent: the panels are stacked, each `size` (the image is `size.height` x panels tall). */
  at?: Placement[];
  spec: TopLevelSpec;
}
