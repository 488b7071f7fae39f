/**
 * How the network families (network.ts) train their brain.js networks.
 *
 * brain.js NeuralNetwork, tanh, per-sample SGD (momentum 0.1) on plain number arrays (see
 * legacy-predict.ts: brain's throughput depends on it). Hidden layers: ctx.params.layersRequested clamped to
 * 1..5, 0 = one; width as the legacy engine (next power of two >= inputs + outputs, 8..64).
 * Early stopping: the last VALIDATION_SHARE of the fit rows (chronological data; tabular data: every 7th
 * row, since its order may be sorted by anything) is held out when that leaves at least MIN_VALIDATION rows;
 * the validation MSE is checked every few epochs, the best weights (toJSON) are kept and training stops when
 * PATIENCE checks bring no improvement. The network is then refitted on every fit row, from the same initial
 * weights, for the best epoch count. SEEDS networks (fewer on big data) are trained, each with its own seed
 * derived from ctx.seed, and their outputs averaged. brain draws its weights from Math.random, so every fit
 * runs inside prng.withSeededRandom: fully deterministic for a given ctx.seed.
 * The legacy DeviatedTarget goal (stop once at most that share of the training rows deviate by more than
 * DeviationTarget) is honoured at the same checks.
 *
 * Budget: about SAMPLE_EPOCH_BUDGET row presentations per fit over all seeds (early-stopping phase and
 * refit), with at least MIN_EPOCHS and at most ctx.params.epochs epochs per network; cost() is derived from it.
 */
import brain from 'brain.js';
import { ACTIVATION } from '../core/encoder.js';
import { ERROR_THRESH, MOMENTUM, SAMPLE_EPOCH_BUDGET, type NetworkLike } from '../legacy/brain-network.js';
import { mulberry32, shuffleInPlace, withSeededRandom } from '../core/prng.js';
import type { FamilyParams, FitContext } from './model.js';

export const MIN_EPOCHS = 5;
export const VALIDATION_SHARE = 0.15;
export const MIN_VALIDATION = 8;
/** Most validation rows scored at each check (evenly spread over the validation slice). */
export const MAX_CHECK_ROWS = 1000;
/** Validation checks without improvement before training stops. */
export const PATIENCE = 8;

/** The share of the validation MSE an improvement must beat. */
const MIN_IMPROVEMENT = 1e-4;

/** Networks averaged: 3, fewer on big data where one is already stable and each costs a lot. */
export function seedCount(rows: number): number {
  return rows <= 5_000 ? 3 : rows <= 20_000 ? 2 : 1;
}

export interface Plan {
  seeds: number;
  /** Epoch cap of the early-stopping phase (and of a fit without validation). */
  epochs: number;
  validation: number;
}

/** Same arithmetic in cost() and fit(), so progress weights match the work. */
export function planFor(rows: number, timeOrdered: boolean, params: Pick<FamilyParams, 'epochs'> | undefined, final = true): Plan {
  // Backtest fits train one network for as many epochs as each averaged network of the final fit gets:
  // the same network, a third of the work where only its ranking is needed.
  const seeds = seedCount(rows);
  const validation = validationRows(rows, timeOrdered).length;
  // Worst case per network: the capped phase on the training part, then the refit on every row.
  const perEpoch = validation > 0 ? 2 * rows - validation : rows;
  const cap = Math.max(1, Math.ceil(params?.epochs ?? 2000));
  const epochs = Math.min(cap, Math.max(MIN_EPOCHS, Math.floor(SAMPLE_EPOCH_BUDGET / seeds / Math.max(1, perEpoch))));
  return { seeds: final ? seeds : 1, epochs, validation };
}

export function plannedWork(rows: number, plan: Plan): number {
  const perEpoch = plan.validation > 0 ? 2 * rows - plan.validation : rows;
  return plan.seeds * plan.epochs * perEpoch;
}

/** Indices of the validation rows: the last share (time-ordered) or every 7th row (tabular), or none. */
export function validationRows(rows: number, timeOrdered: boolean): number[] {
  const count = Math.round(rows * VALIDATION_SHARE);
  if (count < MIN_VALIDATION || rows - count < 2 * MIN_VALIDATION) return [];
  if (timeOrdered) return Array.from({ length: count }, (_, k) => rows - count + k);
  const out: number[] = [];
  for (let i = 6; i < rows; i += 7) out.push(i);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Training one network

export interface Sample {
  input: number[];
  output: number[];
}

interface Trained {
  json: unknown;
  epochs: number;
}

/** Thrown from brain's callback: the only way to end its synchronous train() loop early. */
class StopTraining extends Error {
  constructor(readonly epochs: number) {
    super('stop');
  }
}

interface TrainOptions {
  hidden: number[];
  learningRate: number;
  epochs: number;
  seed: number;
  /** Called after every epoch with the number of row presentations done since the last call. */
  onWork(presentations: number): void;
  /** Legacy DeviatedTarget goal on the given network: true = stop now. */
  goalReached?: (net: NetworkLike) => boolean;
}

function checkPeriod(epochs: number): number {
  return Math.max(1, Math.min(25, Math.ceil(epochs / 40)));
}

interface BrainInternals {
  sizes: number[];
  weights: Float32Array[][];
  biases: Float32Array[];
  initialize(): void;
}

/**
 * A network with Glorot-uniform weights and hidden biases in [-1, 1] (drawn from Math.random: call inside
 * withSeededRandom). brain's own initialisation (every weight and bias in [-0.2, 0.2]) starts the network in
 * tanh's linear regime, where the residual of a linear model offers it no gradient at all (the residual is
 * uncorrelated with every feature by construction), and it stays a constant for hundreds of epochs.
 */
function newNetwork(samples: Sample[], hidden: number[]): brain.NeuralNetwork {
  const net = new brain.NeuralNetwork({ hiddenLayers: hidden, activation: ACTIVATION });
  const first = samples[0] as Sample;
  const internals = net as unknown as BrainInternals;
  internals.sizes = [first.input.length, ...hidden, first.output.length];
  internals.initialize();
  const last = internals.sizes.length - 1;
  for (let layer = 1; layer <= last; layer++) {
    const limit = Math.sqrt(6 / ((internals.sizes[layer - 1] as number) + (internals.sizes[layer] as number)));
    for (const weights of internals.weights[layer] as Float32Array[]) {
      for (let k = 0; k < weights.length; k++) weights[k] = (2 * Math.random() - 1) * limit;
    }
    const biases = internals.biases[layer] as Float32Array;
    const spread = layer === last ? 0.2 : 1;
    for (let k = 0; k < biases.length; k++) biases[k] = (2 * Math.random() - 1) * spread;
  }
  return net;
}

/**
 * Trains a fresh network (initial weights from Math.random: call inside withSeededRandom) for up to `epochs`
 * epochs. `onCheck(net, epoch)` runs every checkPeriod epochs (true = stop now); `onEnd(net, epochs)` once.
 */
function runBrain(
  samples: Sample[],
  options: TrainOptions,
  epochs: number,
  onCheck: (net: brain.NeuralNetwork, epoch: number) => boolean,
  onEnd: (net: brain.NeuralNetwork, epochs: number, stopped: boolean) => void,
): void {
  const net = newNetwork(samples, options.hidden);
  const period = checkPeriod(options.epochs);
  const callback = (state: { iterations: number }) => {
    options.onWork(samples.length);
    if (state.iterations % period === 0 && state.iterations < epochs && onCheck(net, state.iterations)) {
      throw new StopTraining(state.iterations);
    }
  };
  try {
    const status = net.train(samples, {
      iterations: epochs,
      errorThresh: ERROR_THRESH,
      learningRate: options.learningRate,
      momentum: MOMENTUM,
      callback,
      callbackPeriod: 1,
      log: false,
    });
    onEnd(net, status.iterations, false);
  } catch (stop) {
    if (!(stop instanceof StopTraining)) throw stop;
    onEnd(net, stop.epochs, true);
  }
}

/**
 * One network: early stopping on `validation` (indices into samples) when there is one, then a refit on every
 * sample, from the same initial weights, for the best epoch count (the early-stopped weights themselves are
 * not kept: the refit also learns from the most recent rows); without validation, `options.epochs` epochs
 * on every sample.
 */
function trainOne(samples: Sample[], validation: number[], options: TrainOptions): Trained {
  const random = mulberry32(options.seed ^ 0x5bd1e995);
  const held = new Set(validation);
  const fitPart = shuffleInPlace(
    samples.filter((_, i) => !held.has(i)),
    random,
  );
  const all = shuffleInPlace([...samples], random);
  const goal = (net: brain.NeuralNetwork) => options.goalReached?.(net) ?? false;
  const fitAll = (epochs: number, check: (net: brain.NeuralNetwork) => boolean): Trained => {
    let result: Trained = { json: null, epochs: 0 };
    withSeededRandom(options.seed, () =>
      runBrain(all, options, epochs, check, (net, done) => {
        result = { json: net.toJSON(), epochs: done };
      }),
    );
    return result;
  };
  if (validation.length === 0) return fitAll(options.epochs, goal);

  // The validation MSE on at most MAX_CHECK_ROWS evenly spread rows keeps the checks a few % of the work.
  const stride = Math.max(1, Math.ceil(validation.length / MAX_CHECK_ROWS));
  const checks = validation.filter((_, k) => k % stride === 0).map((i) => samples[i] as Sample);
  let best = { loss: Infinity, epoch: 0 };
  let stale = 0;
  const check = (net: brain.NeuralNetwork, epoch: number) => {
    const loss = mse(net, checks);
    if (loss < best.loss * (1 - MIN_IMPROVEMENT)) {
      best = { loss, epoch };
      stale = 0;
    } else {
      stale++;
    }
  };
  withSeededRandom(options.seed, () =>
    runBrain(
      fitPart,
      options,
      options.epochs,
      (net, epoch) => {
        check(net, epoch);
        return stale >= PATIENCE || goal(net);
      },
      (net, done, stopped) => {
        if (!stopped) check(net, done);
      },
    ),
  );
  return fitAll(Math.max(1, best.epoch), () => false);
}

function mse(net: brain.NeuralNetwork, samples: Sample[]): number {
  let sum = 0;
  let count = 0;
  for (const s of samples) {
    const out = net.run(s.input) as ArrayLike<number>;
    for (let j = 0; j < s.output.length; j++) {
      sum += ((out[j] as number) - (s.output[j] as number)) ** 2;
      count++;
    }
  }
  return count === 0 ? 0 : sum / count;
}

/** Trains every seed's network; progress is the share of the planned row presentations. */
export function trainSeeds(
  samples: Sample[],
  validation: number[],
  plan: Plan,
  ctx: FitContext,
  hidden: number[],
  goal?: (net: NetworkLike) => boolean,
): { trained: Trained[]; presentations: number } {
  const planned = Math.max(1, plannedWork(samples.length, plan));
  let work = 0;
  let last = -Infinity;
  const onWork = (n: number) => {
    work += n;
    const now = performance.now();
    if (now - last >= 50) {
      last = now;
      ctx.progress(Math.min(1, work / planned));
    }
  };
  ctx.progress(0);
  const seeds = Array.from({ length: plan.seeds }, (_, k) => (Math.imul(ctx.seed ^ 0x27d4eb2d, k + 1) + k * 0x9e3779b9) >>> 0);
  const trained = seeds.map((seed) =>
    trainOne(samples, validation, {
      hidden,
      learningRate: ctx.params.learningRate > 0 && ctx.params.learningRate < 1 ? ctx.params.learningRate : 0.05,
      epochs: plan.epochs,
      seed,
      onWork,
      goalReached: goal,
    }),
  );
  ctx.progress(1);
  return { trained, presentations: work };
}

/** The averaged outputs of the networks for each input. */
export function averaged(nets: NetworkLike[], inputs: number[][], width: number): number[][] {
  return inputs.map((input) => {
    const sum = new Array<number>(width).fill(0);
    for (const net of nets) {
      const out = net.run(input);
      for (let j = 0; j < width; j++) sum[j] = (sum[j] as number) + (out[j] as number) / nets.length;
    }
    return sum;
  });
}
