/**
 * What the tree families (forest.ts, boosting.ts) share: they apply to tabular data only (on series the
 * time-aware families do better), and they fit on a bounded, evenly spaced subset of the rows.
 */
import type { FitRows, SeriesInfo } from './model.js';

/** Fit rows a tree family sees at most. */
export const MAX_TREE_ROWS = 1000;
const MIN_ROWS = 20;

export const appliesToTables = (info: SeriesInfo, rows: number) => !info.timeOrdered && rows >= MIN_ROWS;

/** The sampled fit rows and their feature count; refuses data without features. */
export function treeFitRows(rows: FitRows): { data: FitRows; features: number } {
  const features = rows.features[0]?.length ?? 0;
  if (features === 0) throw new Error('no features to split on');
  const n = rows.time.length;
  if (n <= MAX_TREE_ROWS) return { data: rows, features };
  const keep = Array.from({ length: MAX_TREE_ROWS }, (_, i) => Math.floor((i * n) / MAX_TREE_ROWS));
  return {
    data: {
      time: keep.map((i) => rows.time[i] as number),
      features: keep.map((i) => rows.features[i] as number[]),
      target: keep.map((i) => (rows.target as (number | string)[])[i]) as number[] | string[],
    },
    features,
  };
}
