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
 * Training (both): network-training.ts.
 */
import { hiddenLayerWidth, loadNetwork, MAX_HIDDEN_LAYERS, type NetworkLike } from '../legacy/brain-network.js';
import type { FamilyParams, FitContext, FitRows, FittedModel, ModelFamily, PredictRows, SeriesInfo } from './model.js';
import { averaged, planFor, plannedWork, trainSeeds, validationRows, type Sample } from './network-training.js';

const TARGET_HIGH = 0.8;
const TARGET_RANGE = 0.9;


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
