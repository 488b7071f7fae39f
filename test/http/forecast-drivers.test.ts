/**
 * Known drivers through the API: covariates filled in the rows to forecast move the forecast, per series and across
 * a panel, in the direction of the effect the status record names; without them the forecast is another; a
 * covariate empty in the rows to forecast is never read as of its own row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trainingContext, type forecastJobs } from '../support/forecast-jobs.js';
import { milesWithGas, monthlyWeather, unemployedByIndustry, type DriverUpload } from '../support/driver-series.js';

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

/** Trains the upload; answers the forecast column's values (upload order), the status record and the reply's selection. */
async function forecast(upload: DriverUpload, column: string) {
  const { jobId } = await jobs.jobWithData(upload.csv);
  await jobs.finished(jobId);
  const rows = await jobs.output(jobId);
  const { Selection: selection } = await jobs.stat(jobId);
  const output = selection?.outputs[0];
  return { values: rows.map((r) => Number(r[column])), record: (await jobs.statusRecords(jobId))[0]?.text ?? '', output, selection };
}

describe('a panel with a known driver (unemployed persons by industry, the industry unemployment rate filled in the years to forecast)', () => {
  it('answers the fixed-effects regression across the series, names its effect, and a higher future rate raises every forecast', { timeout: 2 * ENGINE_TIMEOUT }, async () => {
    const actual = await forecast(unemployedByIndustry(2), 'unemployed');
    const scenario = await forecast(unemployedByIndustry(2, { rateScale: 1.5 }), 'unemployed');
    expect(actual.values).toHaveLength(28);
    // The choice across the 14 series combines the two forms of the fixed-effects regression.
    expect(actual.output?.description).toMatch(/fixed_effects_diff \(0\.\d+\), fixed_effects \(0\.\d+\) \(chosen across 14 series\)/);
    // The record names the driver and its fitted effects, as of the year and a year earlier: an elasticity near 1
    // (count = rate x labour force), next to nothing a year on.
    const effects = /fixed effects across 14 series \(changes, a drift per series, in logarithms, common slopes\): rate (\S+) \(elasticity: 1% more, \S+% on the value\), rate a step earlier (\S+) \(elasticity/.exec(actual.record);
    expect(Number(effects?.[1])).toBeGreaterThan(0.9);
    expect(Number(effects?.[1])).toBeLessThan(1.1);
    expect(Math.abs(Number(effects?.[2]))).toBeLessThan(0.2);
    // 50% more unemployment rate: about 50% more unemployed (an elasticity near 1), in every industry and year.
    actual.values.forEach((v, i) => {
      const ratio = (scenario.values[i] as number) / v;
      expect(ratio).toBeGreaterThan(1.3);
      expect(ratio).toBeLessThan(1.6);
    });
  });

  it('the same upload without the rate: no family that reads drivers, and another forecast (the driver is what moved it)', { timeout: 2 * ENGINE_TIMEOUT }, async () => {
    const withRate = await forecast(unemployedByIndustry(2), 'unemployed');
    const without = await forecast(unemployedByIndustry(2, { withRate: false }), 'unemployed');
    const names = without.output?.candidates.map((c) => c.name) ?? [];
    expect(names).not.toContain('fixed_effects');
    expect(names).not.toContain('trend_regression');
    expect(names).not.toContain('regression_arima');
    expect(without.values).not.toEqual(withRate.values);
    // Against the actual annual means of 2008 and 2009 (a recession: the rates rose), the driver's forecast is closer.
    const truth = unemployedTruth();
    const error = (values: number[]) => values.reduce((s, v, i) => s + Math.abs(v - (truth[i] as number)), 0) / values.length;
    expect(error(withRate.values)).toBeLessThan(error(without.values));
  });
});

describe('a panel whose series each answer a regression on their drivers (monthly maximum temperature in Seattle and New York, the month\'s minimum, rain and wind filled in)', () => {
  it('sums up each family\'s fitted effects over the series it answers, in the record', { timeout: ENGINE_TIMEOUT }, async () => {
    const { values, record, output } = await forecast(monthlyWeather(6), 'temp_max');
    expect(values).toHaveLength(12);
    const summed = /regression_arima in the answer of 2 series: temp_min median (\S+) per unit \((\S+) to (\S+)\)/.exec(record);
    expect(summed, record.slice(0, 600)).not.toBeNull();
    // A warmer night goes with a warmer day in both cities.
    expect(Number(summed?.[2])).toBeGreaterThan(0);
    expect(output?.notes?.some((note) => note.startsWith('regression_arima in the answer of 2 series: temp_min'))).toBe(true);
  });
});

describe('one series with a known driver (miles driven per person, the real price of gas filled in the years to forecast)', () => {
  it('answers the trend regression, names the effect of gas per dollar, and a dollar more on the future price lowers the forecast by it', { timeout: 2 * ENGINE_TIMEOUT }, async () => {
    const actual = await forecast(milesWithGas(2005, 5), 'miles');
    const dearer = await forecast(milesWithGas(2005, 5, 1), 'miles');
    expect(actual.output?.chosen).toBe('trend_regression');
    const effect = Number(/gas (-\d+(\.\d+)?) per unit/.exec(actual.output?.description ?? '')?.[1]);
    expect(effect).toBeLessThan(0);
    expect(actual.record).toContain(`gas ${effect} per unit`);
    actual.values.forEach((v, i) => expect((dearer.values[i] as number) - v).toBeCloseTo(effect, -1));
  });
});

describe('a covariate empty in the rows to forecast', () => {
  it('is forecast as an output of its own and never read as of its own row: no family that models known drivers is tried', { timeout: ENGINE_TIMEOUT }, async () => {
    // The rate left empty in the years to forecast: not a known driver (a stated input would be read a horizon back).
    const upload = unemployedByIndustry(2);
    const lines = upload.csv.trim().split('\n');
    const csv = `${[lines[0], ...lines.slice(1).map((line) => (line.endsWith(',') ? line.replace(/,[^,]*,$/, ',,') : line))].join('\n')}\n`;
    const { jobId } = await jobs.jobWithData(csv);
    await jobs.finished(jobId);
    const { Selection: selection } = await jobs.stat(jobId);
    expect(selection?.outputs.map((o) => o.column)).toEqual(['rate', 'unemployed']);
    const names = selection?.outputs.flatMap((o) => o.candidates.map((c) => c.name)) ?? [];
    for (const name of ['fixed_effects', 'fixed_effects_diff', 'trend_regression', 'regression_arima']) expect(names).not.toContain(name);
    const rows = await jobs.output(jobId);
    expect(rows.every((r) => Number(r.rate) > 0 && Number(r.unemployed) > 0)).toBe(true);
  });
});

/** The annual means of 2008 and 2009 by industry, in the upload's order of rows to forecast. */
function unemployedTruth(): number[] {
  const withTruth = unemployedByIndustry(0);
  const rows = withTruth.csv.trim().split('\n').slice(1).map((l) => l.split(','));
  return rows.filter((r) => Number(r[1]) >= 2008).map((r) => Number(r[3]));
}
