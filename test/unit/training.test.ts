import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTrainingPool, type TrainingPool } from '../../src/training/run/pool.js';
import { predict, adjustForecast } from '../../src/training/run/predict.js';
import { trainModel } from '../../src/training/run/engine.js';
import { mulberry32 } from '../../src/training/core/prng.js';
import {
  TrainingError,
  type ColumnSpec,
  type TrainingInput,
  type TrainingProgress,
  type TrainingResult,
} from '../../src/training/core/types.js';

const SEASON = [5, 3, 0, -2, -4, -6, -3, 0, 2, 4, 6, 8];
const STORE_EFFECT: Record<string, number> = { A: 4, B: 0, C: -3 };

/** y = 3*x1 + 2*x2 + seasonal(month) + store effect + U(-0.5, 0.5); monthly from 2000-01. */
function truth(x1: number, x2: number, month: number, store: string): number {
  return 3 * x1 + 2 * x2 + (SEASON[month - 1] as number) + (STORE_EFFECT[store] as number);
}

function monthlySeries(known: number, toForecast: number, seed = 7) {
  const random = mulberry32(seed);
  const header = ['Year', 'Month', 'x1', 'x2', 'Store', 'Note', 'Sales'];
  const rows: (string | null)[][] = [];
  const hidden: number[] = [];
  for (let i = 0; i < known + toForecast; i++) {
    const year = 2000 + Math.floor(i / 12);
    const month = (i % 12) + 1;
    const x1 = random() * 10;
    const x2 = random() * 5;
    const store = ['A', 'B', 'C'][Math.floor(random() * 3)] as string;
    const y = truth(Number(x1.toFixed(2)), Number(x2.toFixed(2)), month, store) + (random() - 0.5);
    if (i >= known) hidden.push(y);
    rows.push([String(year), String(month), x1.toFixed(2), x2.toFixed(2), store, `n${i}`, i < known ? y.toFixed(2) : i % 2 ? '' : null]);
  }
  const columns: ColumnSpec[] = [
    { name: 'Year', role: 'date', kind: 'numeric', datePart: 'year' },
    { name: 'Month', role: 'date', kind: 'numeric', datePart: 'month' },
    { name: 'x1', role: 'input', kind: 'numeric' },
    { name: 'x2', role: 'input', kind: 'numeric' },
    { name: 'Store', role: 'input', kind: 'categorical' },
    { name: 'Note', role: 'ignore', kind: 'categorical' },
    { name: 'Sales', role: 'output', kind: 'numeric' },
  ];
  return { header, rows, columns, hidden };
}

const mae = (a: number[], b: number[]) => a.reduce((s, v, i) => s + Math.abs(v - (b[i] as number)), 0) / a.length;

describe('legacy network-only path (ModelFamily network) through the worker pool', () => {
  let pool: TrainingPool;
  const series = monthlySeries(300, 12);
  const input: TrainingInput = {
    header: series.header,
    columns: series.columns,
    rows: series.rows,
    params: { modelFamily: 'network', seed: 42, epochs: 300, layersRequested: 1, learningRate: 0.05 },
  };
  let result: TrainingResult;
  const progress: TrainingProgress[] = [];

  beforeAll(async () => {
    pool = createTrainingPool({ maxThreads: 2 });
    result = await pool.train(input, { onProgress: (p) => progress.push(p) });
  }, 30_000);

  afterAll(async () => {
    await pool?.close();
  });

  it('beats the seasonal-naive baseline on the hold-out and fills every metric', () => {
    const m = result.metrics;
    expect(m.trainingRows).toBe(240);
    expect(m.validationRows).toBe(60);
    expect(m.mae).toBeLessThan(m.baselineMae / 3);
    expect(m.rmse).toBeLessThan(m.baselineRmse / 3);
    expect(m.rmse).toBeGreaterThanOrEqual(m.mae);
    expect(m.mape).not.toBeNull();
    expect(m.mape as number).toBeGreaterThan(0);
    expect(Number.isInteger(result.successRate)).toBe(true);
    expect(result.successRate).toBeGreaterThan(60);
    expect(result.successRate).toBeLessThanOrEqual(100);
    // Year(1) + Month(3: scaled, sin, cos) + x1 + x2 + Store one-hot(3) = 9 inputs; width = next pow2 of 10.
    expect(result.figures).toEqual({ neurons: 16, inputs: 9, outputs: 1, layersRequested: 1, layersCreated: 1 });
    expect(result.timing.samples).toBe(300);
    expect(result.timing.epochs).toBe(300);
    expect(result.timing.samplesEpochsPerSecond).toBeGreaterThan(0);
    expect(result.model.params.seed).toBe(42);
  });

  it('forecasts exactly the rows with empty outputs, as full rows', () => {
    expect(result.forecasts.map((f) => f.rowIndex)).toEqual(Array.from({ length: 12 }, (_, i) => 300 + i));
    const first = result.forecasts[0]?.values as Record<string, string>;
    expect(Object.keys(first).sort()).toEqual([...series.header].sort());
    expect(first.Year).toBe('2025');
    expect(first.Month).toBe('1');
    expect(first.Note).toBe('n300');
    expect(first.Sales).toMatch(/^-?\d+\.\d{2}$/);
    const predicted = result.forecasts.map((f) => Number(f.values.Sales));
    const naive = series.hidden.map((_, i) => Number(series.rows[300 + i - 12]?.[6]));
    expect(mae(predicted, series.hidden)).toBeLessThan(mae(naive, series.hidden) / 3);
  });

  it('reproduces the forecasts with predict() on the JSON round-tripped model', () => {
    const stored = JSON.parse(JSON.stringify(result.model));
    const rows = result.forecasts.map((f) => series.rows[f.rowIndex as number] as (string | null)[]);
    expect(predict(stored, series.header, rows)).toEqual(result.forecasts.map((f) => f.values));
    // Records keyed by column name give the same answer.
    const records = rows.map((r) => Object.fromEntries(series.header.map((h, i) => [h, r[i] ?? ''])));
    expect(predict(stored, series.header, records)).toEqual(result.forecasts.map((f) => f.values));
  });

  it('learns the categorical input and tolerates unknown categories', () => {
    const row = (store: string) => ({ Year: '2025', Month: '6', x1: '5', x2: '2', Store: store, Note: '', Sales: '' });
    const [a, b, c, unknown] = predict(result.model, series.header, [row('A'), row('B'), row('C'), row('Z')]).map((r) =>
      Number(r.Sales),
    ) as [number, number, number, number];
    expect(a - b).toBeGreaterThan(2.5);
    expect(a - b).toBeLessThan(5.5);
    expect(b - c).toBeGreaterThan(1.5);
    expect(Number.isFinite(unknown)).toBe(true);
  });

  it('reports progress rising to 100', () => {
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0]?.advance).toBe(0);
    expect(progress.at(-1)?.advance).toBe(100);
    for (let i = 1; i < progress.length; i++) {
      expect(progress[i]?.advance).toBeGreaterThanOrEqual(progress[i - 1]?.advance as number);
    }
  });

  it('is deterministic for a seed', async () => {
    const again = await pool.train(input, {});
    expect(again.forecasts).toEqual(result.forecasts);
    expect(again.model).toEqual(result.model);
    expect(again.metrics).toEqual(result.metrics);
  }, 30_000);

  it('applies margins and noNegatives to forecasts only', async () => {
    const widened = await pool.train({ ...input, params: { ...input.params, increaseMargin: 10 } }, {});
    expect(widened.metrics).toEqual(result.metrics);
    widened.forecasts.forEach((f, i) => {
      const base = Number(result.forecasts[i]?.values.Sales);
      expect(Math.abs(Number(f.values.Sales) - base * 1.1)).toBeLessThanOrEqual(0.011 + Math.abs(base) * 0.001);
    });
    // decrease 150% turns every positive prediction negative: -0.5*|p|; noNegatives clips at 0.
    const lowered = { ...result.model, params: { ...result.model.params, decreaseMargin: 150 } };
    const rows = result.forecasts.map((f) => series.rows[f.rowIndex as number] as (string | null)[]);
    const negative = predict(lowered, series.header, rows).map((r) => Number(r.Sales));
    expect(negative.every((v) => v < 0)).toBe(true);
    const clipped = predict({ ...lowered, params: { ...lowered.params, noNegatives: true } }, series.header, rows);
    expect(clipped.map((r) => r.Sales)).toEqual(rows.map(() => '0.00'));
    expect(adjustForecast(100, { increaseMargin: 10, decreaseMargin: 4 })).toBeCloseTo(106);
    expect(adjustForecast(-10, { increaseMargin: 10 })).toBeCloseTo(-9);
    expect(adjustForecast(-10, { noNegatives: true })).toBe(0);
  }, 30_000);

  it('aborts a running training within a second and keeps working', async () => {
    const controller = new AbortController();
    let abortedAt = 0;
    const long = pool.train(
      { ...input, params: { ...input.params, epochs: 1_000_000 } },
      {
        signal: controller.signal,
        onProgress: (p) => {
          if (p.epoch > 0 && abortedAt === 0) {
            abortedAt = performance.now();
            controller.abort();
          }
        },
      },
    );
    const error = await long.catch((e: unknown) => e);
    const elapsed = performance.now() - abortedAt;
    expect(abortedAt).toBeGreaterThan(0);
    expect(error).toBeInstanceOf(TrainingError);
    expect((error as TrainingError).code).toBe('aborted');
    expect(elapsed).toBeLessThan(1000);
    const after = await pool.train({ ...input, params: { ...input.params, epochs: 20 } }, {});
    expect(after.forecasts).toHaveLength(12);
  }, 30_000);

  it('rejects unusable uploads with a TrainingError', async () => {
    const noOutput = { ...input, columns: input.columns.filter((c) => c.role !== 'output') };
    const error = await pool.train(noOutput, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrainingError);
    expect((error as TrainingError).code).toBe('invalid_input');
  });
});

describe('legacy network-only path (ModelFamily network) in-process', () => {
  it('generates a season of future monthly rows when nothing is left to forecast', () => {
    const s = monthlySeries(120, 0);
    const r = trainModel({ ...s, params: { modelFamily: 'network', seed: 1, epochs: 30 } });
    expect(r.forecasts).toHaveLength(12);
    expect(r.forecasts.every((f) => f.rowIndex === null)).toBe(true);
    expect(r.forecasts.map((f) => `${f.values.Year}-${f.values.Month}`)).toEqual(
      Array.from({ length: 12 }, (_, i) => `2010-${i + 1}`),
    );
    // Non-date inputs are carried from the last known row; ignored columns are blank.
    const last = s.rows.at(-1) as (string | null)[];
    expect(r.forecasts[0]?.values.x1).toBe(last[2]);
    expect(r.forecasts[0]?.values.Store).toBe(last[4]);
    expect(r.forecasts[0]?.values.Note).toBe('');
  });

  it('steps whole-date columns: daily -> 7 rows, hourly -> 24 rows; baseline uses the season', () => {
    const random = mulberry32(3);
    const daily = Array.from({ length: 70 }, (_, i) => {
      const d = new Date(Date.UTC(2024, 0, 1 + i));
      const weekday = d.getUTCDay();
      return [d.toISOString().slice(0, 10), String(10 + (weekday === 0 || weekday === 6 ? 5 : 0) + Math.round(random()))];
    });
    const r = trainModel({
      header: ['Date', 'Visits'],
      columns: [
        { name: 'Date', role: 'date', kind: 'numeric' },
        { name: 'Visits', role: 'output', kind: 'numeric' },
      ],
      rows: daily,
      params: { modelFamily: 'network', seed: 1, epochs: 200 },
    });
    expect(r.forecasts.map((f) => f.values.Date)).toEqual([
      '2024-03-11', '2024-03-12', '2024-03-13', '2024-03-14', '2024-03-15', '2024-03-16', '2024-03-17',
    ]);
    // Weekly pattern: the weekday features let the network see weekends.
    const weekend = r.forecasts.slice(5).map((f) => Number(f.values.Visits));
    const weekdays = r.forecasts.slice(0, 5).map((f) => Number(f.values.Visits));
    expect(Math.min(...weekend)).toBeGreaterThan(Math.max(...weekdays));

    const hourly = Array.from({ length: 48 }, (_, i) => [
      `01/03/2024 ${String(i % 24).padStart(2, '0')}:00`.replace('01/03', i < 24 ? '01/03' : '02/03'),
      String(i % 24),
      String(100 + i),
    ]);
    const h = trainModel({
      header: ['When', 'Hour', 'Load'],
      columns: [
        { name: 'When', role: 'date', kind: 'numeric' },
        { name: 'Hour', role: 'input', kind: 'numeric' },
        { name: 'Load', role: 'output', kind: 'numeric' },
      ],
      rows: hourly,
      params: { modelFamily: 'network', seed: 1, epochs: 10 },
    });
    expect(h.forecasts).toHaveLength(24);
    expect(h.forecasts[0]?.values.When).toBe('03/03/2024 00:00');
    expect(h.forecasts[23]?.values.When).toBe('03/03/2024 23:00');
  });

  it('keeps a known row whose numeric input holds text (it reads the training mean), honours dataRowsToConsider, predicts a categorical output', () => {
    const random = mulberry32(11);
    const rows = Array.from({ length: 200 }, () => {
      const x = random() * 10;
      return [x.toFixed(2), x > 5 ? 'high' : 'low'];
    });
    rows[10] = ['n/a', 'low'];
    rows.push(['7.5', ''], ['1.0', '']);
    const params = { modelFamily: 'network' as const, seed: 5, epochs: 60 };
    const columns: ColumnSpec[] = [
      { name: 'x', role: 'input', kind: 'numeric' },
      { name: 'band', role: 'output', kind: 'categorical' },
    ];
    const r = trainModel({ header: ['x', 'band'], columns, rows, params });
    expect(r.metrics.trainingRows + r.metrics.validationRows).toBe(200);
    expect(r.metrics.mape).toBeNull();
    expect(r.metrics.mae).toBeLessThan(0.15); // error rate
    expect(r.successRate).toBeGreaterThan(85);
    expect(r.forecasts.map((f) => f.values.band)).toEqual(['high', 'low']);
    const limited = trainModel({ header: ['x', 'band'], columns, rows, params: { ...params, dataRowsToConsider: 50 } });
    expect(limited.metrics.trainingRows + limited.metrics.validationRows).toBe(50);
  });

  it('stops early once the deviatedTarget goal is met', () => {
    const s = monthlySeries(120, 0);
    const r = trainModel({ ...s, params: { modelFamily: 'network', seed: 1, epochs: 2000, deviationTarget: 50, deviatedTarget: 50 } });
    expect(r.timing.epochs).toBeLessThan(2000);
  });
});
