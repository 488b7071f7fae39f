/**
 * A numeric input the user stated as an input (PUT /data <column>=input) that is empty in every row to
 * forecast is used through its past only: each row reads the column's value a horizon
 * earlier, and the stored model keeps the known values the rows to forecast need, so a reload predicts the
 * same rows.
 *
 * Real data with a leading input: vega-datasets' us-employment.csv (US Bureau of Labor Statistics, Current
 * Employment Statistics, seasonally adjusted, thousands of jobs, monthly 2006-2015). Professional and business
 * services holds employment services (temporary help), the BLS's classic leading indicator of hiring: its
 * month-on-month change 6 months earlier correlates 0.64 with the change of transportation and warehousing
 * jobs, against 0.39 for transportation's own change 6 months earlier and 0.39 the other way round. The
 * upload is the 120 months of both columns with the last 6 months of both left empty.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { trainModel } from '../../src/training/run/engine.js';
import { featureNames, type FeatureSpaceState } from '../../src/training/core/features.js';
import type { EngineState } from '../../src/training/series/forecaster.js';
import { linearFamily } from '../../src/training/models/linear.js';
import { predict } from '../../src/training/run/predict.js';
import { analyse } from '../../src/training/core/series.js';
import { forecastSeries } from '../../src/training/series/series-run.js';
import type { ColumnSpec, TrainedModel, TrainingInput, TrainingResult } from '../../src/training/core/types.js';
import { VEGA_DATA } from '../support/industries.js';

const OUTPUT = 'transportation_and_warehousing';
const LEADING = 'professional_and_business_services';
const HIDDEN = 6;

const lines = readFileSync(join(VEGA_DATA, 'us-employment.csv'), 'utf8').trim().split('\n');
const header = (lines[0] as string).split(',');
const records = lines.slice(1).map((line) => line.split(','));
const cell = (r: string[], name: string) => r[header.indexOf(name)] as string;
const truth = records.slice(-HIDDEN).map((r) => Number(cell(r, OUTPUT)));
const HEADER = ['year', 'month', LEADING, OUTPUT];
const rows = records.map((r, i) => {
  const hide = i >= records.length - HIDDEN;
  const [year, month] = cell(r, 'month').split('-') as [string, string];
  return [year, String(Number(month)), hide ? null : cell(r, LEADING), hide ? null : cell(r, OUTPUT)];
});

/**
 * The upload with the leading column stated an input (`stated`), or ignored, as before stated inputs were
 * used through their past.
 */
function upload(stated: boolean): TrainingInput {
  const columns: ColumnSpec[] = [
    { name: 'year', role: 'date', kind: 'numeric', datePart: 'year' },
    { name: 'month', role: 'date', kind: 'numeric', datePart: 'month' },
    stated ? { name: LEADING, role: 'input', kind: 'numeric', stated: true } : { name: LEADING, role: 'ignore', kind: 'numeric' },
    { name: OUTPUT, role: 'output', kind: 'numeric' },
  ];
  return { header: HEADER, columns, rows, params: {} };
}

/** The ridge regression alone (the family that reads the features on a series), so its forecast is the model's. */
function ridgeOnly(stated: boolean): TrainingResult {
  const input = upload(stated);
  return forecastSeries(input, analyse(input), {}, 1234, { choose: () => [linearFamily], windows: 3 });
}

const forecastOf = (r: TrainingResult) => r.forecasts.map((f) => Number(f.values[OUTPUT]));
const mae = (forecast: number[]) => forecast.reduce((s, v, i) => s + Math.abs(v - (truth[i] as number)), 0) / forecast.length;
const ridgeError = (r: TrainingResult) => r.selection?.outputs[0]?.candidates.find((c) => c.name === 'linear')?.error as number;
const stateOf = (r: TrainingResult) => (r.model as Extract<TrainedModel, { version: 2 }>).engine as EngineState;

describe('a stated input empty in every row to forecast: its past is used', () => {
  it('is set aside from the roles and named as an input with no future', () => {
    const analysis = analyse(upload(true));
    expect(analysis.pastInputs).toEqual([LEADING]);
    expect(analysis.columns.find((c) => c.name === LEADING)?.role).toBe('ignore');
    expect(analysis.forecast).toHaveLength(HIDDEN);
    // Not stated: forecast as an output of its own, as before.
    const unstated = analyse({ ...upload(true), columns: upload(true).columns.map((c) => (c.name === LEADING ? { ...c, stated: false } : c)) });
    expect(unstated.pastInputs).toEqual([]);
    expect(unstated.columns.find((c) => c.name === LEADING)?.role).toBe('output');
  });

  it('the engine reads it 6 months back, says so, and the ridge backtests far better with it', { timeout: 120_000 }, () => {
    const lagged = trainModel(upload(true));
    const without = trainModel(upload(false));
    expect(lagged.selection?.timeNotes).toContain(`input '${LEADING}' is empty in every row to forecast: its value 6 steps earlier is used (feature '${LEADING} (lag 6)')`);
    expect(without.selection?.timeNotes ?? []).toEqual([]);
    const features = stateOf(lagged).features;
    expect(featureNames(features)).toContain(`${LEADING} (lag 6)`);
    expect(featureNames(stateOf(without).features)).not.toContain(`${LEADING} (lag 6)`);
    // The stored history is what the 6 rows to forecast read: the last 6 known months (and the one before).
    const [stored] = features.lagged as NonNullable<FeatureSpaceState['lagged']>;
    expect(stored).toMatchObject({ column: LEADING, lag: 6 });
    expect(stored?.values.at(-1)).toBe(Number(cell(records.at(-HIDDEN - 1) as string[], LEADING)));
    expect(stored?.values.length).toBeLessThanOrEqual(7);
    // The ridge regression's backtest MAE (thousands of jobs) with the leading input's past, and without it.
    expect(ridgeError(lagged)).toBeLessThan(ridgeError(without) / 2);
  });

  it("changes the ridge's forecast and brings it closer to the hidden months", { timeout: 120_000 }, () => {
    const lagged = ridgeOnly(true);
    const without = ridgeOnly(false);
    expect(lagged.selection?.outputs[0]?.chosen).toBe('linear');
    expect(forecastOf(lagged)).not.toEqual(forecastOf(without));
    expect(mae(forecastOf(lagged))).toBeLessThan(mae(forecastOf(without)));
  });

  it('a stored model predicts the same rows after a JSON round trip, from the rows alone (as POST /forecasts)', { timeout: 120_000 }, () => {
    const result = ridgeOnly(true);
    const reloaded = JSON.parse(JSON.stringify(result.model)) as TrainedModel;
    const future = rows.slice(-HIDDEN).map((r) => [r[0] ?? '', r[1] ?? '', '', '']);
    const predicted = predict(reloaded, HEADER, future);
    expect(predicted.map((p) => p[OUTPUT])).toEqual(result.forecasts.map((f) => f.values[OUTPUT]));
    // A posted row carrying a value of the column still reads the stored past, not its own cell.
    const posted = predict(reloaded, HEADER, [[future[0]?.[0] ?? '', future[0]?.[1] ?? '', '99999', '']]);
    expect(posted[0]?.[OUTPUT]).toBe(result.forecasts[0]?.values[OUTPUT]);
  });
});
