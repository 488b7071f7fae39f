/**
 * The registry of model families, in order of simplicity (ties in the backtest go to the earlier one).
 * Stored models name their families; revive looks them up here.
 */
import { boostingClassifierFamily, boostingFamily } from './boosting.js';
import { differencedFamily } from './differenced.js';
import { differencedArFamily } from './differenced-ar.js';
import { etsFamily } from './ets.js';
import { forestClassifierFamily, forestFamily } from './forest.js';
import { globalForecastFamily } from './global-forecast.js';
import { harmonicFamily } from './harmonic.js';
import { arFamily, linearArFamily, linearDiffFamily, linearFamily } from './linear.js';
import { logScaleFamily } from './log-scale.js';
import { logisticFamily } from './logistic.js';
import type { ModelFamily, OutputKind } from './model.js';
import { mstlFamily } from './mstl.js';
import { majorityFamily, naiveFamilies } from './naive.js';
import { createNetworkFamily, networkClassifierFamily } from './network.js';
import { sarimaFamily } from './sarima.js';
import { thetaFamily } from './theta.js';

const numeric: ModelFamily[] = [
  ...naiveFamilies,
  linearFamily,
  linearArFamily,
  linearDiffFamily,
  arFamily,
  sarimaFamily,
  etsFamily,
  thetaFamily,
  mstlFamily,
  harmonicFamily,
  forestFamily,
  boostingFamily,
  // The network learns what the ridge regression misses, so it never has to extrapolate a trend.
  createNetworkFamily(linearFamily),
];
const categorical: ModelFamily[] = [majorityFamily, logisticFamily, forestClassifierFamily, boostingClassifierFamily, networkClassifierFamily];

export function familiesFor(kind: OutputKind): ModelFamily[] {
  return kind === 'numeric' ? numeric : categorical;
}

/**
 * Families only the series of a panel (or the value columns of a wide upload) try (issue 33), in the order they are
 * added after the registry's: auto.arima's differencing, alone and with AR terms, whose d and p are each series'
 * own, and drift, ETS, Theta and that differencing on logarithms (models/log-scale.ts). ACROSS_SERIES_ONLY of them
 * compete only in a choice across many series (selection.ts POOLED_ONLY); the differencing on logarithms competes
 * in a series' own choice too. The one list that series-run.ts adds to a panel's plan and a stored model may name.
 */
// Geometric growth and proportional errors, for a series above zero (series-run.ts keeps them to such series); the
// differencing on logarithms is auto.arima's on a series growing in percent (214 countries' population).
const logScaleFamilies: ModelFamily[] = [naiveFamilies.find((f) => f.name === 'drift') as ModelFamily, etsFamily, thetaFamily].map(logScaleFamily);
const logDifferencingFamilies: ModelFamily[] = [differencedFamily, differencedArFamily].map(logScaleFamily);

export const ACROSS_SERIES_ONLY: readonly ModelFamily[] = [differencedFamily, differencedArFamily, ...logScaleFamilies];
export const POOLING_FAMILIES: readonly ModelFamily[] = [...ACROSS_SERIES_ONLY, ...logDifferencingFamilies];

/** Names of the families fitted on logarithms, which only a series above zero tries (series-run.ts). */
export const LOG_SCALE_NAMES = new Set([...logScaleFamilies, ...logDifferencingFamilies].map((f) => f.name));

/** Families a stored model may name that a single-series upload never tries: a panel's global model and POOLING_FAMILIES. */
const storedOnly: ModelFamily[] = [globalForecastFamily, ...POOLING_FAMILIES];

export function familyNamed(kind: OutputKind, name: string): ModelFamily {
  const family = familiesFor(kind).find((f) => f.name === name) ?? storedOnly.find((f) => f.kind === kind && f.name === name);
  if (!family) throw new Error(`unknown model family '${name}'`);
  return family;
}
