/**
 * The sampling interval from the data (docs/interface-notes.md, Sub-daily series and long seasons): every
 * listed spacing, with gaps and repeated stamps, in each date form a user uploads (one whole-date column,
 * ISO 8601 with T/Z, date-part columns); the seasonal periods and the default horizon that follow; the
 * seasonal naive of each period.
 */
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { trainModel } from '../../src/training/run/engine.js';
import { naiveFamilies } from '../../src/training/models/naive.js';
import type { SeriesInfo } from '../../src/training/models/model.js';
import { analyse, futureRows } from '../../src/training/core/series.js';
import type { TrainingInput } from '../../src/training/core/types.js';

const START = DateTime.fromISO('2024-01-01T00:00:00', { zone: 'utc' });

/** `n` stamps `minutes` apart (or by calendar months/years), as one whole-date column in `format`. */
function upload(dates: DateTime[], format: string, forecast = 0): TrainingInput {
  const rows = dates.map((d, i) => [d.toFormat(format), i >= dates.length - forecast ? null : String(100 + (i % 7) + Math.sin(i / 5))]);
  return {
    header: ['when', 'load'],
    columns: [
      { name: 'when', role: 'date', kind: 'categorical' },
      { name: 'load', role: 'output', kind: 'numeric' },
    ],
    rows,
    params: {},
  };
}

const every = (n: number, step: (d: DateTime, i: number) => DateTime) => Array.from({ length: n }, (_, i) => step(START, i));

const CASES: { name: string; dates: DateTime[]; frequency: string; periods: number[]; horizon: number }[] = [
  { name: 'every minute', dates: every(200, (d, i) => d.plus({ minutes: i })), frequency: 'minutely', periods: [1440, 10080], horizon: 1440 },
  { name: 'every 5 minutes', dates: every(200, (d, i) => d.plus({ minutes: 5 * i })), frequency: '5-minutely', periods: [288, 2016], horizon: 288 },
  { name: 'every 10 minutes', dates: every(200, (d, i) => d.plus({ minutes: 10 * i })), frequency: '10-minutely', periods: [144, 1008], horizon: 144 },
  { name: 'every 15 minutes', dates: every(200, (d, i) => d.plus({ minutes: 15 * i })), frequency: '15-minutely', periods: [96, 672], horizon: 96 },
  { name: 'half-hourly', dates: every(200, (d, i) => d.plus({ minutes: 30 * i })), frequency: 'half-hourly', periods: [48, 336], horizon: 48 },
  { name: 'hourly', dates: every(200, (d, i) => d.plus({ hours: i })), frequency: 'hourly', periods: [24, 168], horizon: 24 },
  { name: 'daily', dates: every(200, (d, i) => d.plus({ days: i })), frequency: 'daily', periods: [7, 365.25], horizon: 7 },
  { name: 'weekly', dates: every(200, (d, i) => d.plus({ weeks: i })), frequency: 'weekly', periods: [365.25 / 7], horizon: 52 },
  { name: 'monthly', dates: every(60, (d, i) => d.plus({ months: i })), frequency: 'monthly', periods: [12], horizon: 12 },
  { name: 'quarterly', dates: every(40, (d, i) => d.plus({ months: 3 * i })), frequency: 'quarterly', periods: [4], horizon: 4 },
  { name: 'annual', dates: every(30, (d, i) => d.plus({ years: i })), frequency: 'annual', periods: [], horizon: 1 },
];

describe('the sampling interval from the dates', () => {
  for (const c of CASES) {
    it(`${c.name}: ${c.frequency}, periods ${c.periods.join(', ') || 'none'}, default horizon ${c.horizon}`, () => {
      const a = analyse(upload(c.dates, 'yyyy-MM-dd HH:mm:ss'));
      expect(a.timeAxis).toMatchObject({ frequency: c.frequency, periods: c.periods, horizon: c.horizon, businessDays: false });
      expect(a.timeAxis.season).toBe(c.periods.length > 0 ? Math.round(c.periods[0] as number) : 1);
      expect(a.timeReport).toEqual({ duplicates: 0, missingSteps: 0 });
    });
  }

  it('keeps the spacing through gaps and counts the missing steps', () => {
    const dates = every(300, (d, i) => d.plus({ minutes: 30 * i })).filter((_, i) => i % 10 !== 3 && !(i >= 100 && i < 140));
    const a = analyse(upload(dates, "yyyy-MM-dd'T'HH:mm:ss"));
    expect(a.timeAxis.frequency).toBe('half-hourly');
    expect(a.timeReport.missingSteps).toBe(300 - dates.length);
  });

  it('drops repeated stamps, keeping the last row of each, and says so', () => {
    const base = every(100, (d, i) => d.plus({ hours: i }));
    const dates = base.flatMap((d, i) => (i % 20 === 5 ? [d, d] : [d]));
    const input = upload(dates, 'yyyy-MM-dd HH:mm');
    const repeated = dates.findIndex((d, i) => i > 0 && d.equals(dates[i - 1] as DateTime));
    (input.rows[repeated] as (string | null)[])[1] = '999';
    const a = analyse(input);
    expect(a.timeAxis.frequency).toBe('hourly');
    expect(a.timeReport.duplicates).toBe(5);
    expect(a.known).toContain(repeated);
    expect(a.known).not.toContain(repeated - 1);
    const r = trainModel(input);
    expect(r.selection?.timeNotes).toEqual(['5 repeated timestamps: kept the last row of each']);
    expect(r.selection?.frequency).toBe('hourly');
  });

  it('reads ISO 8601 with T and Z, and offsets as UTC', () => {
    const dates = every(120, (d, i) => d.plus({ minutes: 30 * i }));
    expect(analyse(upload(dates, "yyyy-MM-dd'T'HH:mm:ss'Z'")).timeAxis.frequency).toBe('half-hourly');
    const withOffset = upload(dates, "yyyy-MM-dd'T'HH:mm:ss'+02:00'");
    const a = analyse(withOffset);
    expect(a.timeAxis.frequency).toBe('half-hourly');
    expect(a.timeline[0]?.toISO()).toBe('2023-12-31T22:00:00.000Z');
  });

  it('reads date-part columns down to the minute', () => {
    const dates = every(120, (d, i) => d.plus({ minutes: 15 * i }));
    const parts = ['year', 'month', 'day', 'hour', 'minute'] as const;
    const a = analyse({
      header: [...parts, 'load'],
      columns: [...parts.map((p) => ({ name: p, role: 'date' as const, kind: 'numeric' as const, datePart: p })), { name: 'load', role: 'output', kind: 'numeric' }],
      rows: dates.map((d, i) => [...parts.map((p) => String(d[p])), String(i)]),
      params: {},
    });
    expect(a.timeAxis).toMatchObject({ frequency: '15-minutely', periods: [96, 672] });
  });

  it('business days: weekdays only, Friday to Monday is one step, future rows skip the weekend', () => {
    const dates = every(117, (d, i) => d.plus({ days: i })).filter((d) => d.weekday <= 5);
    const input = upload(dates, 'yyyy-MM-dd');
    const a = analyse(input);
    expect(a.timeAxis).toMatchObject({ frequency: 'business daily', businessDays: true, season: 5, horizon: 5 });
    expect(a.timeReport.missingSteps).toBe(0);
    const future = futureRows(input, a).map((r) => r[0]);
    const last = dates.at(-1) as DateTime;
    expect(last.weekday).toBe(5);
    expect(future).toEqual(['2024-04-29', '2024-04-30', '2024-05-01', '2024-05-02', '2024-05-03']);
  });

  it('an upload without rows to forecast gets one natural cycle: a day of half-hours', () => {
    const dates = every(15 * 48, (d, i) => d.plus({ minutes: 30 * i }));
    const r = trainModel(upload(dates, 'yyyy-MM-dd HH:mm'));
    expect(r.forecasts).toHaveLength(48);
    expect(r.forecasts[0]?.values.when).toBe('2024-01-16 00:00');
    expect(r.forecasts[47]?.values.when).toBe('2024-01-16 23:30');
    expect(r.selection).toMatchObject({ frequency: 'half-hourly', season: 48, periods: [48, 336] });
  });
});

describe('the seasonal naive of each period', () => {
  const info: SeriesInfo = { timeOrdered: true, frequency: 'hourly', season: 24, periods: [24, 168], horizon: 24 };
  const time = Array.from({ length: 400 }, (_, i) => i);
  const target = time.map((t) => 1000 * Math.floor(t / 24) + (t % 24));
  const family = (name: string) => naiveFamilies.find((f) => f.name === name);
  const ctx = { info, seed: 1, params: { layersRequested: 0, learningRate: 0.3, epochs: 10, deviationTarget: 5 }, featureNames: [], progress: () => {} };

  it('repeats the last day for the daily period and the last week for the weekly one', () => {
    const ahead = { time: [400, 401, 423, 424, 500], features: time.slice(0, 5).map(() => []) };
    const day = family('seasonal_naive')?.fit({ time, features: time.map(() => []), target }, ctx);
    const week = family('seasonal_naive_long')?.fit({ time, features: time.map(() => []), target }, ctx);
    // t = 400 is slot 16 of its day; its latest day's value is at 376, its latest week's at 232.
    expect(day?.predict(ahead)).toEqual([376, 377, 399, 376, 380].map((t) => target[t]));
    expect(week?.predict(ahead)).toEqual([232, 233, 255, 256, 332].map((t) => target[t]));
    expect(week?.describe()).toBe('seasonal naive (season 168)');
  });

  it('the weekly one applies only with a second, longer period and a week of rows', () => {
    const long = family('seasonal_naive_long');
    expect(long?.applies(info, 168)).toBe(true);
    expect(long?.applies(info, 167)).toBe(false);
    expect(long?.applies({ ...info, periods: [24] }, 400)).toBe(false);
  });
});
