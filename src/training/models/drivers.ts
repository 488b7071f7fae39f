/**
 * What the families that model known drivers share (regression with ARIMA errors, the trend regression): which
 * feature columns they regress on, and the one line that names each driver's fitted effect, per unit of the
 * user's column, for the status record (the first thing a user of a price or capacity driver asks).
 */
import type { FitContext } from './model.js';

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
 * "price -0.42 per unit, promo=yes +12.1": each used feature's coefficient per unit of the user's column (the engine
 * standardised numeric inputs: FitContext.featureScales gives the units one standardised step is).
 */
export function describeEffects(columns: number[], beta: number[], ctx: Pick<FitContext, 'featureNames' | 'featureScales'>): string {
  const effects = columns.map((j, k) => {
    const scale = ctx.featureScales?.[j] ?? 1;
    const perUnit = (beta[k] as number) / (scale > 0 ? scale : 1);
    const size = Number(perUnit.toPrecision(3));
    return `${ctx.featureNames[j] ?? `feature ${j + 1}`} ${size >= 0 ? '+' : ''}${size} per unit`;
  });
  const named = effects.slice(0, NAMED_EFFECTS).join(', ');
  return effects.length > NAMED_EFFECTS ? `${named} and ${effects.length - NAMED_EFFECTS} more drivers` : named;
}
