/**
 * Bad covariates inside the engine (the HTTP side: test/http/drivers-input.test.ts): a cell with no number
 * reads the column's last value before it, a mostly-text column stays a category and says nothing, the
 * inputs a model cannot use are left out, and a clean upload's features are those of before.
 */
import { describe, expect, it } from 'vitest';
import { featuresOf, fitFeatureSpace, unusedInputs } from '../../src/training/core/features.js';
import type { CellReader } from '../../src/training/core/encoder.js';
import { analyse } from '../../src/training/core/series.js';
import type { ColumnSpec, TrainingInput } from '../../src/training/core/types.js';
import { trainModel } from '../../src/training/run/engine.js';

/** A monthly series of 36 known months and 4 to forecast, with the covariate cells `x` gives. */
function monthly(x: (t: number) => string, kind: ColumnSpec['kind'] = 'numeric'): TrainingInput {
  const rows: (string | null)[][] = [];
  for (let t = 0; t < 40; t++) rows.push([String(2000 + Math.floor(t / 12)), String((t % 12) + 1), x(t), t < 36 ? String(100 + 2 * t + (t % 12)) : null]);
  return {
    header: ['year', 'month', 'x', 'y'],
    columns: [
      { name: 'year', role: 'date', kind: 'numeric', datePart: 'year' },
      { name: 'month', role: 'date', kind: 'numeric', datePart: 'month' },
      { name: 'x', role: 'input', kind },
      { name: 'y', role: 'output', kind: 'numeric' },
    ],
    rows,
    params: {},
  };
}

const featuresOfRow = (input: TrainingInput, i: number) => {
  const analysis = analyse(input);
  const space = fitFeatureSpace(analysis, true);
  return { analysis, space, x: featuresOf(space, analysis.readers[i] as CellReader, analysis.timeline[i] ?? null) };
};

describe('a numeric input cell with no number', () => {
  it('reads the last value before it in a row to forecast, not the mean', () => {
    const x = (t: number) => String(10 + t);
    // Rows 36 and 37 filled, 38 and 39 empty: both read row 37's 47.
    const gappy = monthly((t) => (t >= 38 ? '' : x(t)));
    const carried = monthly((t) => (t >= 38 ? '47' : x(t)));
    const { space, x: read } = featuresOfRow(gappy, 39);
    expect(space.carried?.[0]?.column).toBe('x');
    // The known rows' standardisation is the same in both; the empty cell reads 47.
    const { x: truth } = featuresOfRow(carried, 39);
    expect(read[0]).toBeCloseTo(truth[0] as number, 12);
    expect(read[0]).not.toBe(0);
  });

  it('keeps a known row whose cell is empty, reading the value before it', () => {
    const input = monthly((t) => (t === 10 ? '' : String(10 + t)));
    const analysis = analyse(input);
    expect(analysis.known).toContain(10);
    const { x } = featuresOfRow(input, 10);
    const { x: before } = featuresOfRow(input, 9);
    expect(x[0]).toBeCloseTo(before[0] as number, 12);
  });

  it('adds nothing to a clean upload: the same features and no stored table', () => {
    const { space } = featuresOfRow(monthly((t) => String(10 + (t % 7))), 39);
    expect(space.carried).toBeUndefined();
    expect(Object.keys(space)).toEqual(['numeric', 'categorical', 'yearHarmonics', 'weekday', 'years']);
  });
});

describe('column kinds', () => {
  it('reads a column of numbers with a few text cells as numbers, the text cells as missing', () => {
    const analysis = analyse(monthly((t) => (t === 5 || t === 20 ? 'n/a' : String(10 + t)), 'categorical'));
    expect(analysis.columns.find((c) => c.name === 'x')?.kind).toBe('numeric');
    expect(analysis.textCells).toEqual([{ column: 'x', rows: [5, 20], samples: ['n/a'] }]);
  });

  it('keeps a mostly-text column a category and says nothing of it', () => {
    const input = monthly((t) => (t % 3 === 0 ? String(t) : ['low', 'mid', 'high'][t % 3] as string), 'categorical');
    const analysis = analyse(input);
    expect(analysis.columns.find((c) => c.name === 'x')?.kind).toBe('categorical');
    expect(analysis.textCells).toEqual([]);
    const notes = (trainModel(input).selection as { timeNotes?: string[] }).timeNotes ?? [];
    expect(notes.filter((n) => n.includes("'x'"))).toEqual([]);
  });
});

describe('inputs a model cannot use', () => {
  it('leaves out a constant, a duplicate and a collinear input, keeping the first of each pair', () => {
    const rows: (string | null)[][] = [];
    for (let t = 0; t < 30; t++) rows.push([String(t + 1), String(t % 5), String(t % 5), String(3 * (t % 5) + 1), '7', t < 25 ? String(t) : null]);
    const input: TrainingInput = {
      header: ['day', 'a', 'b', 'c', 'k', 'y'],
      columns: [
        { name: 'day', role: 'date', kind: 'numeric', datePart: 'day' },
        ...['a', 'b', 'c', 'k'].map((name) => ({ name, role: 'input' as const, kind: 'numeric' as const })),
        { name: 'y', role: 'output', kind: 'numeric' },
      ],
      rows,
      params: {},
    };
    const analysis = analyse(input);
    expect(unusedInputs(analysis)).toEqual([
      { column: 'b', reason: 'duplicate', of: 'a' },
      { column: 'c', reason: 'collinear', of: 'a', correlation: expect.closeTo(1, 9) as number },
      { column: 'k', reason: 'constant', value: '7' },
    ]);
    expect(fitFeatureSpace(analysis, true).numeric.map((f) => f.column)).toEqual(['a']);
  });
});
