/**
 * Where a series' rows lie on its time axis (series-run.ts prepareSeries): the known rows' times, the rows to
 * forecast (uploaded empty, or generated after the last known row), the horizon and the learnable periods.
 */
import type { DateTime } from 'luxon';
import { stepFrom } from '../core/dates.js';
import type { SeriesState } from './forecaster.js';
import type { SeriesInfo } from '../models/model.js';
import { futureRows, timeIndex, type Analysis } from '../core/series.js';
import type { TrainingInput } from '../core/types.js';

export interface Placement {
  series: SeriesState;
  info: SeriesInfo;
  /** Time of each known row (aligned with analysis.known). */
  knownTimes: number[];
  /** Rows to forecast: cells, date and time. */
  targets: { rowIndex: number | null; cells: (string | null)[]; date: DateTime | null; time: number }[];
}

export function place(input: TrainingInput, analysis: Analysis): Placement {
  const axis = analysis.timeAxis;
  const firstDate = analysis.timeline[analysis.known[0] as number] ?? null;
  const times = firstDate ? timeIndex(analysis, firstDate) : analysis.timeline.map(() => null);
  const known = analysis.known.map((i) => times[i] ?? null);
  const increasing = known.every((t, k) => t !== null && (k === 0 || t > (known[k - 1] as number)));
  const timeOrdered = axis.source !== 'none' && increasing && analysis.forecast.every((i) => times[i] !== null);
  const knownTimes = timeOrdered ? (known as number[]) : known.map((_, k) => k);
  const lastTime = knownTimes[knownTimes.length - 1] as number;
  const lastDate = analysis.timeline[analysis.known.at(-1) as number] ?? null;

  let targets: Placement['targets'];
  if (analysis.forecast.length > 0) {
    targets = analysis.forecast.map((i, j) => ({
      rowIndex: i,
      cells: input.rows[i] as (string | null)[],
      date: analysis.timeline[i] ?? null,
      time: timeOrdered ? (times[i] as number) : lastTime + 1 + j,
    }));
  } else {
    targets = futureRows(input, analysis).map((cells, j) => ({
      rowIndex: null,
      cells,
      date: lastDate && axis.source !== 'none' ? stepFrom(lastDate, axis, j + 1) : null,
      time: lastTime + 1 + j,
    }));
  }
  const ahead = targets.map((t) => t.time - lastTime);
  const horizon = timeOrdered
    ? Math.max(1, Math.min(Math.max(...ahead, 1), Math.floor(knownTimes.length / 2)))
    : Math.max(1, targets.length);
  // Only the periods the known rows hold two full cycles of can be learnt; the shortest is the
  // season the one-season families (seasonal naive, SARIMA, ETS, Theta, season dummies) take.
  const span = knownTimes.length > 0 ? (knownTimes[knownTimes.length - 1] as number) - (knownTimes[0] as number) + 1 : 0;
  const periods = timeOrdered ? axis.periods.filter((p) => Math.round(p) > 1 && 2 * p <= span) : [];
  const season = periods.length > 0 ? Math.round(periods[0] as number) : 1;
  const info: SeriesInfo = { timeOrdered, frequency: axis.frequency, season, periods, horizon };
  const series: SeriesState = {
    timeOrdered,
    source: axis.source,
    dateColumn: axis.dateColumn,
    partColumns: axis.partColumns,
    coarsest: axis.coarsest,
    realDates: axis.realDates,
    unit: axis.unit,
    step: axis.step,
    monthEnd: axis.monthEnd,
    frequency: axis.frequency,
    businessDays: axis.businessDays,
    season,
    periods,
    horizon,
    origin: firstDate ? firstDate.toISO() : null,
    lastTime,
  };
  return { series, info, knownTimes, targets };
}
