/**
 * The registry of model families: the one list of them. Stored models name their families; revive looks them up here.
 */
import { boostingClassifierFamily, boostingFamily } from './boosting.js';
import { differencedFamily } from './differenced.js';
import { differencedArFamily } from './differenced-ar.js';
import { etsFamily } from './ets.js';
import { forestClassifierFamily, forestFamily } from './forest.js';
import { fixedEffectsFamilies, globalForecastFamily } from './global-forecast.js';
import { harmonicFamily } from './harmonic.js';
import { arFamily, linearArFamily, linearDiffFamily, linearFamily } from './linear.js';
import { logScaleFamily } from './log-scale.js';
import { logisticFamily } from './logistic.js';
import type { FamilyTraits, ModelFamily, OutputKind } from './model.js';
import { mstlFamily } from './mstl.js';
import { majorityFamily, naiveFamilies } from './naive.js';
import { createNetworkFamily, networkClassifierFamily } from './network.js';
import { regressionArimaFamily } from './regression-arima.js';
import { sarimaFamily } from './sarima.js';
import { thetaFamily } from './theta.js';
import { trendRegressionFamily } from './trend-regression.js';

const drift = naiveFamilies.find((f) => f.name === 'drift') as ModelFamily;

/**
 * Every family, in order of simplicity within each kind (ties in the backtest go to the earlier one): a new family
 * is one line here, its traits (models/model.ts FamilyTraits) say where the engine tries it. The families tried
 * only where a plan chooses across many series (tried 'pooled') come after every series' own, so ties go to the
 * families before them: auto.arima's differencing, alone and with AR terms, whose d and p are each series' own, and
 * drift, ETS, Theta and that differencing on logarithms (models/log-scale.ts), for growth in percent; the
 * differencing on logarithms is auto.arima's on a series growing in percent (214 countries' population), so it
 * competes in a series' own choice too.
 */
export const FAMILIES: readonly ModelFamily[] = [
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
  trendRegressionFamily,
  regressionArimaFamily,
  forestFamily,
  boostingFamily,
  // The network learns what the ridge regression misses, so it never has to extrapolate a trend.
  createNetworkFamily(linearFamily),
  majorityFamily,
  logisticFamily,
  forestClassifierFamily,
  boostingClassifierFamily,
  networkClassifierFamily,
  differencedFamily,
  differencedArFamily,
  ...[drift, etsFamily, thetaFamily].map((f) => logScaleFamily(f, true)),
  ...[differencedFamily, differencedArFamily].map((f) => logScaleFamily(f, false)),
  globalForecastFamily,
  ...fixedEffectsFamilies,
];

const lists = new Map<string, ModelFamily[]>();

/**
 * The families a series of `kind` tries: every series' (no `tried`), or those a plan that chooses across many series
 * adds to them ('pooled', SelectionOptions.pooled). The same array at every call, so what a series tries can be
 * changed in one place (a study that takes one family out to see every other's fit unchanged).
 */
export function familiesFor(kind: OutputKind, tried?: 'pooled'): ModelFamily[] {
  const key = `${kind} ${tried ?? 'every series'}`;
  let list = lists.get(key);
  if (!list) lists.set(key, (list = FAMILIES.filter((f) => f.kind === kind && f.traits?.tried === tried)));
  return list;
}

/** Names of the families whose traits pass `test`: what selection and reports, which know candidates by name, read. */
export function namesWhere(test: (traits: FamilyTraits) => boolean): ReadonlySet<string> {
  return new Set(FAMILIES.filter((f) => test(f.traits ?? {})).map((f) => f.name));
}

/** The family a stored model names (families of different kinds may share a name). */
export function familyNamed(kind: OutputKind, name: string): ModelFamily {
  const family = FAMILIES.find((f) => f.kind === kind && f.name === name);
  if (!family) throw new Error(`unknown model family '${name}'`);
  return family;
}
