/**
 * Baseline: brain.js trained in-process (no pool, no engine) on the bench data, fixed [16,16] layers and 20
 * iterations, with the engine's activation, scaling and default learning rate/momentum.
 * Prints {samplesEpochsPerSecond, validationMse}: MSE in the original units of y on the last 20%.
 * The run is repeated (default 3, seeded so the model is identical) and the best throughput is reported,
 * because wall-clock throughput on a shared machine only ever errs on the slow side.
 * Run: npx tsx bench/train/brain-alone.ts [repeats] [learningRate]
 */
import brain from 'brain.js';
import { ACTIVATION, DEFAULT_LEARNING_RATE, withSeededRandom } from '../../src/training/testing.js';
import { EPOCHS, HIDDEN, SEED, loadBenchData, type BenchData } from './data.js';

export interface BrainAloneRun {
  samplesEpochsPerSecond: number;
  validationMse: number;
  epochs: number;
  trainMs: number;
}

/** One seeded fit on the bench data (same data, shape, seed and options every time). */
export function brainAloneOnce(data: BenchData, learningRate = DEFAULT_LEARNING_RATE): BrainAloneRun {
  return withSeededRandom(SEED, () => {
    const net = new brain.NeuralNetwork({ hiddenLayers: HIDDEN, activation: ACTIVATION });
    const started = performance.now();
    const status = net.train(data.train, { iterations: EPOCHS, errorThresh: 1e-9, learningRate, momentum: 0.1 });
    const trainMs = performance.now() - started;
    let sum = 0;
    for (const row of data.validation) {
      const pred = data.yFromScaled(net.run(row.input)[0] as number);
      sum += (pred - row.y) ** 2;
    }
    return {
      samplesEpochsPerSecond: (data.train.length * status.iterations) / (trainMs / 1000),
      validationMse: sum / data.validation.length,
      epochs: status.iterations,
      trainMs: Math.round(trainMs),
    };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const repeats = Number(process.argv[2] ?? 3);
  const learningRate = Number(process.argv[3] ?? DEFAULT_LEARNING_RATE);
  const data = loadBenchData();
  const runs = Array.from({ length: repeats }, () => brainAloneOnce(data, learningRate));
  const best = runs.reduce((a, b) => (b.samplesEpochsPerSecond > a.samplesEpochsPerSecond ? b : a));
  console.log(JSON.stringify({ ...best, learningRate, runs: runs.map((r) => Math.round(r.samplesEpochsPerSecond)) }));
}
