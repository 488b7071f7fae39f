/**
 * Shared benchmark data: a deterministic 20,000-row, 10-input non-linear regression written to
 * bench/.out/regression.csv, which all three benchmarks (brain alone, engine pool, sklearn) read, so they
 * see identical numbers, identical split (first 80% train, last 20% validation) and identical scaling.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32, OUTPUT_HIGH, OUTPUT_LOW } from '../../src/training/testing.js';

export const ROWS = 20_000;
export const INPUTS = 10;
export const TRAIN_SHARE = 0.8;
export const HIDDEN = [16, 16];
export const EPOCHS = 20;
export const SEED = 12345;
/** The engine's scaling (encoder.ts): inputs min-max into [-1, 1], y into [OUTPUT_LOW, OUTPUT_HIGH]. */
export const OUT_LOW = OUTPUT_LOW;
export const OUT_HIGH = OUTPUT_HIGH;

const here = dirname(fileURLToPath(import.meta.url));
export const CSV_PATH = join(here, '..', '.out', 'regression.csv');

function generate(): string {
  const random = mulberry32(SEED);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const header = [...Array.from({ length: INPUTS }, (_, i) => `x${i}`), 'y'];
  const lines = [header.join(',')];
  for (let r = 0; r < ROWS; r++) {
    const x = Array.from({ length: INPUTS }, () => random());
    const [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9] = x as [number, number, number, number, number, number, number, number, number, number];
    const y =
      10 + 5 * x0 - 3 * x1 + 4 * x2 * x3 + 2 * Math.sin(2 * Math.PI * x4) + 3 * x5 * x5 - 2 * x6 * x7 + x8 + 0.5 * x9 +
      0.25 * gauss();
    lines.push([...x.map((v) => v.toFixed(6)), y.toFixed(6)].join(','));
  }
  return lines.join('\n') + '\n';
}

export interface BenchData {
  header: string[];
  rows: string[][];
  /** Inputs min-max scaled into [-1, 1] (train min/max), y into [OUT_LOW, OUT_HIGH]; unscale with yFromScaled. */
  train: { input: number[]; output: number[] }[];
  validation: { input: number[]; y: number }[];
  yFromScaled: (v: number) => number;
}

export function loadBenchData(): BenchData {
  if (!existsSync(CSV_PATH)) {
    mkdirSync(dirname(CSV_PATH), { recursive: true });
    writeFileSync(CSV_PATH, generate());
  }
  const [headerLine, ...lines] = readFileSync(CSV_PATH, 'utf8').trim().split('\n');
  const header = (headerLine as string).split(',');
  const rows = lines.map((l) => l.split(','));
  const numbers = rows.map((r) => r.map(Number));
  const nTrain = Math.round(rows.length * TRAIN_SHARE);
  const trainRows = numbers.slice(0, nTrain);
  const min = header.map((_, j) => Math.min(...trainRows.map((r) => r[j] as number)));
  const max = header.map((_, j) => Math.max(...trainRows.map((r) => r[j] as number)));
  const sx = (r: number[]) =>
    r.slice(0, INPUTS).map((v, j) => (2 * (v - (min[j] as number))) / ((max[j] as number) - (min[j] as number)) - 1);
  const yMin = min[INPUTS] as number;
  const yMax = max[INPUTS] as number;
  const sy = (v: number) => OUT_LOW + ((v - yMin) / (yMax - yMin)) * (OUT_HIGH - OUT_LOW);
  return {
    header,
    rows,
    train: trainRows.map((r) => ({ input: sx(r), output: [sy(r[INPUTS] as number)] })),
    validation: numbers.slice(nTrain).map((r) => ({ input: sx(r), y: r[INPUTS] as number })),
    yFromScaled: (v) => yMin + ((v - OUT_LOW) / (OUT_HIGH - OUT_LOW)) * (yMax - yMin),
  };
}
