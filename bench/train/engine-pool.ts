/**
 * The bench data through the full engine on the worker pool: createTrainingPool().train() with 2 hidden
 * layers (sized [16, 16] by the engine for 10 inputs + 1 output) and 20 epochs. Prints the same JSON as
 * brain-alone.ts: samplesEpochsPerSecond from result.timing (final fit, measured inside the worker) and
 * validationMse = hold-out RMSE^2 (model trained on the first 80%, scored on the last 20%, original units).
 * wallMs / endToEndSamplesEpochsPerSecond cover the whole call (thread start, encoding, both fits, forecasts).
 * Repeated (default 3, same seed => same model) and the best throughput reported, as in brain-alone.ts.
 * Run: npx tsx bench/train/engine-pool.ts [repeats]
 */
import { createTrainingPool } from '../../src/training/run/pool.js';
import type { ColumnSpec } from '../../src/training/core/types.js';
import { EPOCHS, HIDDEN, SEED, loadBenchData } from './data.js';

const repeats = Number(process.argv[2] ?? 3);
const data = loadBenchData();
const columns: ColumnSpec[] = data.header.map((name) => ({
  name,
  role: name === 'y' ? 'output' : 'input',
  kind: 'numeric',
}));
const pool = createTrainingPool({ maxThreads: 1 });

async function once() {
  const started = performance.now();
  const result = await pool.train({
    header: data.header,
    columns,
    rows: data.rows,
    params: { layersRequested: HIDDEN.length, epochs: EPOCHS, seed: SEED },
  });
  const wallMs = performance.now() - started;
  if (result.figures.neurons !== HIDDEN.reduce((a, b) => a + b, 0) || result.figures.layersCreated !== HIDDEN.length) {
    throw new Error(`unexpected network shape ${JSON.stringify(result.figures)}`);
  }
  const { trainingRows, validationRows } = result.metrics;
  const sampleEpochs = (trainingRows + (trainingRows + validationRows)) * EPOCHS;
  return {
    samplesEpochsPerSecond: result.timing.samplesEpochsPerSecond,
    validationMse: result.metrics.rmse ** 2,
    epochs: result.timing.epochs,
    trainMs: Math.round(result.timing.trainMs),
    wallMs: Math.round(wallMs),
    endToEndSamplesEpochsPerSecond: sampleEpochs / (wallMs / 1000),
  };
}

try {
  const runs = [];
  for (let i = 0; i < repeats; i++) runs.push(await once());
  const best = runs.reduce((a, b) => (b.samplesEpochsPerSecond > a.samplesEpochsPerSecond ? b : a));
  console.log(JSON.stringify({ ...best, runs: runs.map((r) => Math.round(r.samplesEpochsPerSecond)) }));
} finally {
  await pool.close();
}
