/**
 * The engine's worst case through the API: a forecast that cannot be right is never answered (a price in
 * hyperinflation, a currency crashing toward zero), and on a short yearly series whose backtest cannot tell a
 * complex model from the simple references, the reference is answered. The status record says why each time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trainingContext, type forecastJobs } from '../support/forecast-jobs.js';
import { milesDriven, monthlyRate, yearlyRate, type ShortSeries } from '../support/short-series.js';

const TZ = 'UTC';
/** Engine runs share two loaded cores with other suites: allow minutes, not the default minute. */
const ENGINE_TIMEOUT = 240_000;

let jobs: ReturnType<typeof forecastJobs>;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ jobs, close } = await trainingContext(TZ, ENGINE_TIMEOUT));
}, 60_000);

afterAll(async () => {
  await close?.();
});

/** Trains the upload; answers the forecast column's values, the status record's text and the report's notes. */
async function forecast(series: ShortSeries, column: string): Promise<{ values: number[]; record: string; notes: string[] }> {
  const { jobId } = await jobs.jobWithData(series.csv);
  await jobs.finished(jobId);
  const rows = await jobs.output(jobId);
  const { Selection: selection } = await jobs.stat(jobId);
  return { values: rows.map((r) => Number(r[column])), record: (await jobs.statusRecords(jobId))[0]?.text ?? '', notes: selection?.outputs[0]?.notes ?? [] };
}

describe('a forecast that cannot be right is never answered', () => {
  it('the real per US dollar in hyperinflation (July 1991 to June 1994, monthly): no value at or below zero, and the record says which fit was refused', { timeout: ENGINE_TIMEOUT }, async () => {
    const series = monthlyRate('BRL', '1991-07', 48, 12);
    expect(series.known.at(-1)! / series.known[0]!).toBeGreaterThan(1000);
    const { values, record } = await forecast(series, 'rate');
    expect(values).toHaveLength(12);
    // The backtest's winner, an autoregression on the levels, forecast -12.3 reais per dollar six months on.
    expect(values.every((v) => v > 0)).toBe(true);
    expect(record).toMatch(/not answered: ar's final fit falls to -\S+ at step \d+ on a series that was always above zero/);
  });

  it('US dollars per real of 1994 crashing toward zero (1981 to 1983, monthly): the answer stays above zero', { timeout: ENGINE_TIMEOUT }, async () => {
    const series = monthlyRate('BRL', '1981-01', 48, 12, { inverse: true });
    expect(series.known[0]! / series.known.at(-1)!).toBeGreaterThan(5);
    const { values, record } = await forecast(series, 'rate');
    // The winner, Holt's linear trend, carried the fall through zero within the year.
    expect(values.every((v) => v > 0)).toBe(true);
    expect(record).toMatch(/not answered: ets's final fit falls to -\S+ at step \d+ on a series that was always above zero/);
    expect(Math.max(...values)).toBeLessThanOrEqual(Math.max(...series.known));
  });
});

describe('weak evidence on a short yearly series answers the simple reference', () => {
  it('miles driven per person, 1956-1998 (a trend): drift, the last value plus the average step', { timeout: ENGINE_TIMEOUT }, async () => {
    const series = milesDriven(2004, 6);
    const { values, record } = await forecast(series, 'miles');
    const { known } = series;
    const step = (known.at(-1)! - known[0]!) / (known.length - 1);
    // The upload's whole miles: the forecast is rounded to them.
    values.forEach((v, i) => expect(Math.abs(v - (known.at(-1)! + (i + 1) * step))).toBeLessThanOrEqual(0.5));
    expect(record).toMatch(/weak evidence on 3 windows of 6: .+ scored \d\.\d\d of drift's error \(geometric mean over the windows\), not the 0\.61 or less that counts as clear: drift answered/);
  });

  it('pounds per US dollar, 1957-2014 (a random walk): the last value', { timeout: ENGINE_TIMEOUT }, async () => {
    const series = yearlyRate('GBP', 2020, 6);
    const { values, record, notes } = await forecast(series, 'rate');
    expect(values).toHaveLength(6);
    values.forEach((v) => expect(v).toBe(series.known.at(-1)));
    expect(record).toMatch(/weak evidence on 3 windows of 6: .+ naive answered/);
    expect(notes).toHaveLength(1);
    expect(record).toContain(notes[0]);
  });
});
