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
 * Families that compete only in a choice across many series (issue 33), never in one series' own choice:
 * auto.arima's differencing, alone and with AR terms, whose d and p are each series' own, and drift, ETS,
 * Theta and that differencing on logarithms (models/log-scale.ts). The one list that
 * series-run.ts adds to a pooled plan, selection.ts keeps out of a series' own choice (POOLED_ONLY), and a
 * stored model may name.
 */
// Geometric growth and proportional errors, for a series above zero (series-run.ts keeps them to such series); the
// differencing on logarithms is auto.arima's on a series growing in percent (214 countries' population).
const logScaleFamilies: ModelFamily[] = [
  naiveFamilies.find((f) => f.name === 'drift') as ModelFamily,
  etsFamily,
  thetaFamily,
  differencedFamily,
  differencedArFamily,
].map(logScaleFamily);

export const POOLING_FAMILIES: readonly ModelFamily[] = [differencedFamily, differencedArFamily, ...logScaleFamilies];

/** Names of the families fitted on logarithms, which only a series above zero tries (series-run.ts). */
export const LOG_SCALE_NAMES = new Set(logScaleFamilies.map((f) => f.name));

/** Families a stored model may name that never compete on one series: a panel's global model and POOLING_FAMILIES. */
const storedOnly: ModelFamily[] = [globalForecastFamily, ...POOLING_FAMILIES];

export function familyNamed(kind: OutputKind, name: string): ModelFamily {
  const family = familiesFor(kind).find((f) => f.name === name) ?? storedOnly.find((f) => f.kind === kind && f.name === name);
  if (!family) throw new Error(`unknown model family '${name}'`);
  return family;
}
