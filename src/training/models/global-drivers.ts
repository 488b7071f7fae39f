/**
 * The known drivers as the global model across a panel reads them (global.ts): each driver on a series' laid-out time
 * axis, scaled by that series' own spread of it, so that a price of 2 dollars in one store and 20 in another say the
 * same to the trees.
 */
import { mean as meanOf } from '../stats/closed-forms.js';
import type { PanelDrivers } from './fixed-effects.js';

/**
 * A series' drivers on its laid-out axis: the value at each position (a known row's, or a row to forecast's in the
 * final round; the last one before it where a step has none), then scaled by the series' own mean and spread over
 * its rows up to the cut: the level as (x - mean) / sd, the change from the previous position over the spread of the
 * one-step changes.
 */
export function layDrivers(
  time: number[],
  rows: PanelDrivers['series'][number],
  count: number,
  d: { start: number; length: number; size: number },
  cut: number,
  predict: number[],
  final: boolean,
): { change: Float64Array; level: Float64Array }[] {
  const size = d.size;
  return Array.from({ length: count }, (_, c) => {
    const at = new Map<number, number>();
    if (rows) {
      time.forEach((t, i) => {
        const v = rows.known[i]?.[c];
        if (v !== null && v !== undefined && Number.isFinite(v) && (t <= cut || !final)) at.set(t, v);
      });
      if (final) {
        predict.forEach((t, k) => {
          const v = rows.future[k]?.[c];
          if (v !== null && v !== undefined && Number.isFinite(v)) at.set(t, v);
        });
      }
    }
    const raw = new Float64Array(size).fill(NaN);
    let last = NaN;
    for (let p = 0; p < size; p++) {
      last = at.get(d.start + p) ?? last;
      raw[p] = last;
    }
    const known = Array.from(raw.subarray(0, d.length)).filter((v) => !Number.isNaN(v));
    const changes: number[] = [];
    for (let p = 1; p < d.length; p++) if (!Number.isNaN(raw[p]) && !Number.isNaN(raw[p - 1])) changes.push((raw[p] as number) - (raw[p - 1] as number));
    const spread = (xs: number[], mean: number) => Math.sqrt(xs.reduce((a, v) => a + (v - mean) ** 2, 0) / Math.max(1, xs.length)) || 1;
    const mean = known.length > 0 ? meanOf(known) : 0;
    const sd = spread(known, mean);
    const changeSd = spread(changes, 0);
    const level = new Float64Array(size);
    const change = new Float64Array(size);
    for (let p = 0; p < size; p++) {
      level[p] = ((raw[p] as number) - mean) / sd;
      change[p] = p > 0 ? ((raw[p] as number) - (raw[p - 1] as number)) / changeSd : NaN;
    }
    return { change, level };
  });
}
