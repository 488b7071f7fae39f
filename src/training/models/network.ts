/**
 * The brain.js network families.
 *
 * Numeric ('network', createNetworkFamily(base)): the base family (the engine passes the ridge `linear`) is
 * fitted on the fit rows; the network learns the base's in-sample residual from the exogenous features only
 * (FitRows.features, plus the phase of the season as sin/cos on a time axis: bounded terms, never a raw
 * trend), so it never has to extrapolate: the trend stays the base's job. Prediction = base prediction +
 * de-standardised network output. Without a base the network learns the target itself.
 * The residual is centred on its mean and divided by max(3 sd, max |deviation| / 0.9), so every training
 * target lies inside tanh's range (brain's output layer is tanh too) while a typical one is standardised.
 *
 * Categorical ('network', networkClassifierFamily): one output per class (0.8 for the class, -0.8 for the
 * others), the class with the highest averaged output wins.
 *
 * Training (both): brain.js NeuralNetwork, tanh, per-sample SGD (momentum 0.1) on plain number arrays (see
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
import { ERROR_THRESH, hiddenLayerWidth, loadNetwork, MAX_HIDDEN_LAYERS, MOMENTUM, SAMPLE_EPOCH_BUDGET, type NetworkLike } from '../legacy/brain-network.js';
import { mulberry32, shuffleInPlace, withSeededRandom } from '../core/prng.js';
import type { FamilyParams, FitContext, FitRows, FittedModel, ModelFamily, PredictRows, SeriesInfo } from './model.js';

export const MIN_EPOCHS = 5;
export const VALIDATION_SHARE = 0.15;
export const MIN_VALIDATION = 8;
/** Most validation rows scored at each check (evenly spread over the validation slice). */
export const MAX_CHECK_ROWS = 1000;
/** Validation checks without improvement before training stops. */
export const PATIENCE = 8;
const TARGET_HIGH = 0.8;
const TARGET_RANGE = 0.9;
/** The share of the validation MSE an improvement must beat. */
const MIN_IMPROVEMENT = 1e-4;

/** Networks averaged: 3, fewer on big data where one is already stable and each costs a lot. */
export function seedCount(rows: number): number {
  return rows <= 5_000 ? 3 : rows <= 20_000 ? 2 : 1;
}

interface Plan {
  seeds: number;
  /** Epoch cap of the early-stopping phase (and of a fit without validation). */
  epochs: number;
  validation: number;
}

/** Same arithmetic in cost() and fit(), so progress weights match the work. */
function planFor(rows: number, timeOrdered: boolean, params: Pick<FamilyParams, 'epochs'> | undefined, final = true): Plan {
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

function plannedWork(rows: number, plan: Plan): number {
  const perEpoch = plan.validation > 0 ? 2 * rows - plan.validation : rows;
  return plan.seeds * plan.epochs * perEpoch;
}

/** Indices of the validation rows: the last share (time-ordered) or every 7th row (tabular), or none. */
function validationRows(rows: number, timeOrdered: boolean): number[] {
  const count = Math.round(rows * VALIDATION_SHARE);
  if (count < MIN_VALIDATION || rows - count < 2 * MIN_VALIDATION) return [];
  if (timeOrdered) return Array.from({ length: count }, (_, k) => rows - count + k);
  const out: number[] = [];
  for (let i = 6; i < rows; i += 7) out.push(i);
  return out;
}

function hiddenLayers(params: FamilyParams | undefined, inputs: number, outputs: number): number[] {
  const requested = params?.layersRequested ?? 0;
  const layers = requested > 0 ? Math.min(MAX_HIDDEN_LAYERS, Math.max(1, Math.round(requested))) : 1;
  return Array.from({ length: layers }, () => hiddenLayerWidth(inputs, outputs));
}

/** Season phase terms (sin/cos of the first two harmonics) for time-ordered seasonal data, else none. */
function phaseTerms(season: number, t: number): number[] {
  if (season <= 1) return [];
  const a = (2 * Math.PI * t) / season;
  return season >= 4 ? [Math.sin(a), Math.cos(a), Math.sin(2 * a), Math.cos(2 * a)] : [Math.sin(a), Math.cos(a)];
}

function inputsOf(features: number[][], time: number[], season: number): number[][] {
  return features.map((row, i) => {
    const phase = phaseTerms(season, time[i] as number);
    // Plain arrays of plain numbers: what brain trains fastest on.
    return phase.length === 0 ? Array.from(row) : [...row, ...phase];
  });
}

// ---------------------------------------------------------------------------------------------------------
// Training one network

interface Sample {
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
function trainSeeds(
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
function averaged(nets: NetworkLike[], inputs: number[][], width: number): number[][] {
  return inputs.map((input) => {
    const sum = new Array<number>(width).fill(0);
    for (const net of nets) {
      const out = net.run(input);
      for (let j = 0; j < width; j++) sum[j] = (sum[j] as number) + (out[j] as number) / nets.length;
    }
    return sum;
  });
}

// ---------------------------------------------------------------------------------------------------------
// Numeric family

export interface NetworkState {
  base: { family: string; state: unknown } | null;
  /** Season of the phase terms appended to the features (0 = none). */
  season: number;
  inputs: number;
  hidden: number[];
  center: number;
  scale: number;
  epochs: number[];
  /** Row presentations (rows x epochs) of the fit, over every seed and phase: its work, for benchmarks. */
  presentations: number;
  /** brain toJSON() of each seed's network. */
  nets: unknown[];
}

function describeNets(state: { hidden: number[]; inputs: number; epochs: number[]; nets: unknown[] }): string {
  return `brain.js network [${state.inputs}-${state.hidden.join('-')}] tanh, ${state.nets.length} seed(s) averaged, ${state.epochs.join('/')} epochs`;
}

function checkFeatures(rows: FitRows): number {
  const width = rows.features[0]?.length ?? 0;
  if (rows.features.some((r) => r.length !== width)) throw new Error('feature rows differ in width');
  return width;
}

export function createNetworkFamily(base?: ModelFamily): ModelFamily<NetworkState> {
  const revive = (state: NetworkState): FittedModel<NetworkState> => {
    const baseModel = state.base && base ? base.revive(state.base.state) : null;
    if (state.base && !baseModel) throw new Error(`network model needs its base family '${state.base.family}'`);
    const nets = state.nets.map(loadNetwork);
    return {
      state,
      predict(rows: PredictRows) {
        const baseValues = baseModel ? (baseModel.predict(rows) as number[]) : null;
        const out = averaged(nets, inputsOf(rows.features, rows.time, state.season), 1);
        return out.map((o, i) => (baseValues ? (baseValues[i] as number) : 0) + state.center + state.scale * (o[0] as number));
      },
      describe() {
        const nets = describeNets(state);
        return baseModel ? `${baseModel.describe()} + ${nets} on its residual` : nets;
      },
    };
  };

  return {
    name: 'network',
    kind: 'numeric',
    traits: { panelCost: 'never' },
    applies: (info, rows) => rows >= 10 && (base ? base.applies(info, rows) : true),
    cost: (info, rows, final) => (base ? base.cost(info, rows) : 0) + 20 + plannedWork(rows, planFor(rows, info.timeOrdered, undefined, final ?? true)) / 5000,
    fit(rows, ctx) {
      const n = rows.target.length;
      const y = rows.target as number[];
      const width = checkFeatures(rows);
      const season = ctx.info.timeOrdered && ctx.info.season > 1 ? ctx.info.season : 0;
      if (width === 0 && season === 0) throw new Error('no features for the network to learn from');
      const baseModel = base ? base.fit(rows, { ...ctx, progress: () => undefined }) : null;
      const baseValues = baseModel ? (baseModel.predict({ time: rows.time, features: rows.features }) as number[]) : null;
      const residual = y.map((v, i) => v - (baseValues ? (baseValues[i] as number) : 0));
      if (residual.some((v) => !Number.isFinite(v))) throw new Error('non-finite residual');
      const center = residual.reduce((a, b) => a + b, 0) / n;
      const sd = Math.sqrt(residual.reduce((a, b) => a + (b - center) ** 2, 0) / n);
      const maxDev = residual.reduce((m, v) => Math.max(m, Math.abs(v - center)), 0);
      const scale = Math.max(3 * sd, maxDev / TARGET_RANGE) || 1;

      const inputs = inputsOf(rows.features, rows.time, season);
      const samples = inputs.map((input, i) => ({ input, output: [((residual[i] as number) - center) / scale] }));
      const plan = planFor(n, ctx.info.timeOrdered, ctx.params, ctx.final ?? true);
      const hidden = hiddenLayers(ctx.params, (inputs[0] as number[]).length, 1);
      const stride = Math.max(1, Math.floor(n / 500));
      const goal = deviatedGoal(ctx, (net) => {
        const flags: boolean[] = [];
        for (let i = 0; i < n; i += stride) {
          const predicted = (baseValues ? (baseValues[i] as number) : 0) + center + scale * (net.run((samples[i] as Sample).input)[0] as number);
          const actual = y[i] as number;
          flags.push(Math.abs(predicted - actual) > (ctx.params.deviationTarget / 100) * (actual !== 0 ? Math.abs(actual) : scale));
        }
        return flags;
      });
      const { trained, presentations } = trainSeeds(samples, validationRows(n, ctx.info.timeOrdered), plan, ctx, hidden, goal);
      const state: NetworkState = {
        base: baseModel && base ? { family: base.name, state: baseModel.state } : null,
        season,
        inputs: (inputs[0] as number[]).length,
        hidden,
        center,
        scale,
        epochs: trained.map((t) => t.epochs),
        presentations,
        nets: trained.map((t) => t.json),
      };
      return revive(state);
    },
    revive,
  };
}

/** The legacy DeviatedTarget goal as a check on a network: `deviates` lists, per checked row, whether it deviates. */
function deviatedGoal(ctx: FitContext, deviates: (net: NetworkLike) => boolean[]): ((net: NetworkLike) => boolean) | undefined {
  const goal = ctx.params.deviatedTarget;
  if (goal === undefined || !(goal >= 0)) return undefined;
  return (net) => {
    const flags = deviates(net);
    const share = flags.length === 0 ? 0 : flags.filter(Boolean).length / flags.length;
    return share * 100 <= goal;
  };
}

/** The network on the standardised target, without a base. */
export const networkFamily = createNetworkFamily();

// ---------------------------------------------------------------------------------------------------------
// Categorical family

export interface NetworkClassifierState {
  classes: string[];
  inputs: number;
  hidden: number[];
  epochs: number[];
  presentations: number;
  nets: unknown[];
}

function reviveClassifier(state: NetworkClassifierState): FittedModel<NetworkClassifierState> {
  const nets = state.nets.map(loadNetwork);
  return {
    state,
    predict(rows: PredictRows) {
      if (state.classes.length === 1 || nets.length === 0) return rows.time.map(() => state.classes[0] as string);
      return averaged(nets, rows.features.map((r) => Array.from(r)), state.classes.length).map((o) => state.classes[argmax(o)] as string);
    },
    describe: () => `${describeNets(state)}, ${state.classes.length} classes`,
  };
}

function argmax(values: number[]): number {
  let best = 0;
  for (let j = 1; j < values.length; j++) if ((values[j] as number) > (values[best] as number)) best = j;
  return best;
}

export const networkClassifierFamily: ModelFamily<NetworkClassifierState> = {
  name: 'network',
  kind: 'categorical',
  traits: { panelCost: 'never' },
  applies: (_info: SeriesInfo, rows: number) => rows >= 10,
  cost: (info, rows, final) => 20 + plannedWork(rows, planFor(rows, info.timeOrdered, undefined, final ?? true)) / 5000,
  fit(rows, ctx) {
    const labels = rows.target as string[];
    const n = labels.length;
    const width = checkFeatures(rows);
    const classes = [...new Set(labels)].sort();
    if (classes.length === 0) throw new Error('no rows');
    if (classes.length === 1) {
      ctx.progress(1);
      return reviveClassifier({ classes, inputs: width, hidden: [], epochs: [], presentations: 0, nets: [] });
    }
    if (width === 0) throw new Error('no features for the network to learn from');
    const index = new Map(classes.map((c, j) => [c, j]));
    const samples = rows.features.map((row, i) => {
      const k = index.get(labels[i] as string) as number;
      return { input: Array.from(row), output: classes.map((_, j) => (j === k ? TARGET_HIGH : -TARGET_HIGH)) };
    });
    const plan = planFor(n, ctx.info.timeOrdered, ctx.params, ctx.final ?? true);
    const hidden = hiddenLayers(ctx.params, width, classes.length);
    const stride = Math.max(1, Math.floor(n / 500));
    const goal = deviatedGoal(ctx, (net) => {
      const flags: boolean[] = [];
      for (let i = 0; i < n; i += stride) {
        const s = samples[i] as Sample;
        flags.push(argmax(Array.from(net.run(s.input))) !== argmax(s.output));
      }
      return flags;
    });
    const { trained, presentations } = trainSeeds(samples, validationRows(n, ctx.info.timeOrdered), plan, ctx, hidden, goal);
    return reviveClassifier({ classes, inputs: width, hidden, epochs: trained.map((t) => t.epochs), presentations, nets: trained.map((t) => t.json) });
  },
  revive: reviveClassifier,
};
