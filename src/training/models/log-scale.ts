/**
 * A family fitted on the logarithms of a series above zero, its forecasts taken back by exp (the Box-Cox
 * transform with lambda 0, as R's forecast offers every model through `lambda = 0`). Growth in percent, as
 * prices, populations and exchange rates grow, is a straight line in logarithms: drift there is geometric
 * growth, ETS's additive errors are proportional ones, auto.arima's differences are growth rates. exp of a
 * forecast of the mean log is the median of the original scale, which is what the backtest's absolute error
 * rewards, so no bias correction is made. Only a series whose plan chooses across many series tries them, and
 * only where it is above zero (FamilyTraits tried and positiveOnly); drift, ETS and Theta on logarithms compete only
 * in that choice, the differencing in a series' own choice too (candidates.ts, selection.ts POOLED_ONLY).
 */
import { aboveZero, type FittedModel, type ModelFamily } from './model.js';

interface LogScaleState {
  base: unknown;
}

function onLogs(fitted: FittedModel): FittedModel<LogScaleState> {
  return {
    predict: (rows) => (fitted.predict(rows) as number[]).map((v) => Math.exp(v)),
    describe: () => `${fitted.describe()} on logarithms`,
    state: { base: fitted.state },
  };
}

/** `base` on logarithms; none of its traits carry over (drift on logarithms is no naive reference). */
export function logScaleFamily(base: ModelFamily, acrossSeriesOnly: boolean): ModelFamily<LogScaleState> {
  return {
    name: `log_${base.name}`,
    kind: 'numeric',
    traits: { tried: 'pooled', acrossSeriesOnly, positiveOnly: true },
    applies: (info, rows) => info.timeOrdered && base.applies(info, rows),
    cost: (info, rows, final) => base.cost(info, rows, final),
    fit(rows, ctx) {
      const y = rows.target as number[];
      if (!aboveZero(y)) throw new Error('a value at or below zero has no logarithm');
      return onLogs(base.fit({ ...rows, target: y.map((v) => Math.log(v)) }, ctx));
    },
    revive: (state) => onLogs(base.revive(state.base)),
  };
}
