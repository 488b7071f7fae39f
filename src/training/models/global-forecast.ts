/**
 * A series' share of a model fitted across a panel's series (global.ts, fixed-effects.ts): the model is trained once across every
 * series of the upload, so what one series keeps is its forecast, by time step, not the trees. The family
 * never competes on a single series (it is scored by the panel, panel.ts); it is registered so that a stored
 * panel model revives its members by name like any other.
 *
 * A stored forecast predicts the steps it holds; a row past its last step takes the last step's value and a
 * row before its first the first's (the model saw no later history to do better).
 */
import type { FittedModel, FitRows, ModelFamily, PredictRows } from './model.js';

export interface GlobalForecastState {
  /** Time (in the series' own steps) of values[0]. */
  first: number;
  values: number[];
  description: string;
}

function revive(state: GlobalForecastState): FittedModel<GlobalForecastState> {
  return {
    state,
    describe: () => state.description,
    predict: (rows: PredictRows) =>
      rows.time.map((t) => {
        const k = Math.min(state.values.length - 1, Math.max(0, Math.round(t - state.first)));
        return state.values[k] as number;
      }),
  };
}

export const GLOBAL_FAMILY_NAME = 'global_boosting';

/**
 * A family whose fit is made across a panel's series and kept as each series' forecast: the registry's entry
 * revives stored forecasts and never applies on its own.
 */
function acrossSeriesFamily(name: string, readsDrivers = false): ModelFamily<GlobalForecastState> {
  return {
    name,
    kind: 'numeric',
    traits: { tried: 'panel', ...(readsDrivers ? { readsDrivers } : {}) },
    applies: () => false,
    cost: () => 1,
    fit: () => {
      throw new Error(`${name} is fitted across a panel, not on one series`);
    },
    revive,
  };
}

export const globalForecastFamily = acrossSeriesFamily(GLOBAL_FAMILY_NAME);
/** The fixed-effects regressions across a panel's series (fixed-effects.ts), in levels and in differences. */
export const fixedEffectsFamilies = [acrossSeriesFamily('fixed_effects', true), acrossSeriesFamily('fixed_effects_diff', true)];

/** The family a panel hands one series' selection: its final "fit" is the across-series model's forecast for it. */
export function precomputedFamily(name: string, state: GlobalForecastState): ModelFamily<GlobalForecastState> {
  const registered = [globalForecastFamily, ...fixedEffectsFamilies].find((f) => f.name === name) ?? acrossSeriesFamily(name);
  return { ...registered, fit: (_rows: FitRows) => revive(state) };
}
