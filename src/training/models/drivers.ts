/**
 * What the families that model known drivers share (regression with ARIMA errors, the trend regression): which
 * feature columns they regress on, and the one line that names each driver's fitted effect, per unit of the
 * user's column, for the status record (the first thing a user of a price or capacity driver asks).
 */
import type { DriverEffect, FitContext } from './model.js';

/** Drivers listed by name in a description at most; the rest are counted. */
const NAMED_EFFECTS = 6;

/** The feature columns that vary over the fit rows (a constant one is the intercept's, and would make the fit singular). */
export function driverColumns(x: number[][]): number[] {
  const width = x[0]?.length ?? 0;
  const out: number[] = [];
  for (let j = 0; j < width; j++) {
    const first = (x[0] as number[])[j] as number;
    if (x.some((r) => Math.abs((r[j] as number) - first) > 1e-12)) out.push(j);
  }
  return out;
}

/**
 * Each used feature's coefficient per unit of the user's column (the engine standardised numeric inputs:
 * FitContext.featureScales gives the units one standardised step is).
 */
export function effectsOf(columns: number[], beta: number[], ctx: Pick<FitContext, 'featureNames' | 'featureScales'>): DriverEffect[] {
  return columns.map((j, k) => {
    const scale = ctx.featureScales?.[j] ?? 1;
    return { driver: ctx.featureNames[j] ?? `feature ${j + 1}`, perUnit: (beta[k] as number) / (scale > 0 ? scale : 1) };
  });
}

/** A signed effect in three significant digits, "+0.832", "-220". */
export const shownEffect = (v: number) => {
  const size = Number(v.toPrecision(3));
  return `${size >= 0 ? '+' : ''}${size}`;
};

/** "gas -220 per unit, weather=rain +1.35 per unit": the effects as a description names them. */
export function describeEffects(effects: DriverEffect[]): string {
  const shown = effects.map((e) => `${e.driver} ${shownEffect(e.perUnit)} per unit`);
  const named = shown.slice(0, NAMED_EFFECTS).join(', ');
  return shown.length > NAMED_EFFECTS ? `${named} and ${shown.length - NAMED_EFFECTS} more drivers` : named;
}
