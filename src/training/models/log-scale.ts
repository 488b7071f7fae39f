/**
 * A family fitted on the logarithms of a series above zero, its forecasts taken back by exp (the Box-Cox
 * transform with lambda 0, as R's forecast offers every model through `lambda = 0`). Growth in percent, as
 * prices, populations and exchange rates grow, is a straight line in logarithms: drift there is geometric
 * growth, ETS's additive errors are proportional ones, auto.arima's differences are growth rates. exp of a
 * forecast of the mean log is the median of the original scale, which is what the backtest's absolute error
 * rewards, so no bias correction is made. Only a panel's
 * series try them (candidates.ts POOLING_FAMILIES), and only where the series is above zero (series-run.ts); drift,
 * ETS and Theta on logarithms compete only in the choice across its series, the differencing in a series' own
 * choice too (selection.ts POOLED_ONLY).
 */
import type { FittedModel, ModelFamily } from './model.js';

interface LogScaleState {
  base: unknown;
}

/** Whether a series may be fitted on its logarithms: every value above zero. */
export const aboveZero = (values: readonly number[]) => values.length > 0 && values.every((v) => v > 0);

function onLogs(fitted: FittedModel): FittedModel<LogScaleState> {
  return {
    predict: (rows) => (fitted.predict(rows) as number[]).map((v) => Math.exp(v)),
    describe: () => `${fitted.describe()} on logarithms`,
    state: { base: fitted.state },
  };
}

export function logScaleFamily(base: ModelFamily): ModelFamily<LogScaleState> {
  return {
    name: `log_${base.name}`,
    kind: 'numeric',
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
