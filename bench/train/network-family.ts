/**
 * The engine's network model family (src/training/models/network.ts) fitted in-process on the bench data,
 * the way the forecasting engine fits it: on the ridge regression's residual (createNetworkFamily(linearFamily)),
 * early stopping on a validation slice, refit, seeds averaged, 2 hidden layers ([16,16] for 10 inputs + 1
 * output), epoch cap 20 (EPOCHS), the family's own epoch budget. Throughput = the fit's row presentations
 * (every seed and phase, state.presentations) per second of the whole fit (base fit, validation checks and
 * weight snapshots included); validation MSE in y's units on the same last 20% as brain-alone.ts.
 * Run: npx tsx bench/train/network-family.ts [repeats]
 */
import { createNetworkFamily, DEFAULT_LEARNING_RATE, linearFamily, type SeriesInfo } from '../../src/training/testing.js';
import { EPOCHS, HIDDEN, SEED, loadBenchData, type BenchData } from './data.js';

export interface NetworkFamilyRun {
  samplesEpochsPerSecond: number;
  validationMse: number;
  epochs: number;
  trainMs: number;
  description: string;
}

const TABULAR: SeriesInfo = { timeOrdered: false, frequency: 'none' as SeriesInfo['frequency'], season: 1, periods: [], horizon: 1 };

export function networkFamilyOnce(data: BenchData): NetworkFamilyRun {
  const family = createNetworkFamily(linearFamily);
  const rows = {
    time: data.train.map((_, i) => i),
    features: data.train.map((r) => r.input),
    target: data.train.map((r) => data.yFromScaled(r.output[0] as number)),
  };
  const started = performance.now();
  const model = family.fit(rows, {
    info: TABULAR,
    seed: SEED,
    params: { layersRequested: HIDDEN.length, learningRate: DEFAULT_LEARNING_RATE, epochs: EPOCHS, deviationTarget: 10 },
    featureNames: data.header.slice(0, -1),
    progress: () => undefined,
  });
  const trainMs = performance.now() - started;
  const predicted = model.predict({ time: data.validation.map((_, i) => rows.time.length + i), features: data.validation.map((r) => r.input) }) as number[];
  const mse = data.validation.reduce((s, r, i) => s + ((predicted[i] as number) - r.y) ** 2, 0) / data.validation.length;
  return {
    samplesEpochsPerSecond: model.state.presentations / (trainMs / 1000),
    validationMse: mse,
    epochs: Math.max(...model.state.epochs),
    trainMs: Math.round(trainMs),
    description: model.describe(),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const repeats = Number(process.argv[2] ?? 3);
  const data = loadBenchData();
  const runs = Array.from({ length: repeats }, () => networkFamilyOnce(data));
  const best = runs.reduce((a, b) => (b.samplesEpochsPerSecond > a.samplesEpochsPerSecond ? b : a));
  console.log(JSON.stringify({ ...best, runs: runs.map((r) => Math.round(r.samplesEpochsPerSecond)) }));
}
